import type { DecryptedConnection } from '@weft/contracts';
import { NodeFailure } from '../../domain/nodes/node-executor.js';

/**
 * What a `postgres` or `mysql` connection asks to reach, read from its `url` (or
 * `connectionString`) or its fields, keeping only what the drivers are then given explicitly.
 * Options that make a driver read local files or sockets, or connect elsewhere than the host
 * the guard checks, are refused.
 */
export type SqlDialectName = 'postgres' | 'mysql';

export interface SqlTarget {
  dialect: SqlDialectName;
  host: string;
  port: number;
  user?: string;
  password?: string;
  database?: string;
  /** TLS: off, on with certificate verification, or on without it. */
  tls: 'off' | 'verify' | 'no-verify';
  /** Harmless driver settings taken from the URL's query. */
  settings: Record<string, string>;
}

// libpq/pg and mysql2 options that read files, open sockets or override the checked host.
const refusedOptions = new Set([
  'sslcert',
  'sslkey',
  'sslrootcert',
  'sslcrl',
  'sslpassword',
  'passfile',
  'service',
  'servicefile',
  'host',
  'hostaddr',
  'port',
  'socketpath',
  'socket',
  'infilestreamfactory',
  'localinfile',
  'flags',
  'stream',
  'debug',
]);

const passedSettings: Record<SqlDialectName, readonly string[]> = {
  postgres: ['application_name', 'connect_timeout', 'statement_timeout', 'options'],
  mysql: ['charset', 'timezone', 'connectTimeout'],
};

const text = (value: unknown): string | undefined =>
  value === undefined || value === null || value === ''
    ? undefined
    : typeof value === 'object'
      ? JSON.stringify(value)
      : (value as string | number | boolean).toString();

const tlsMode = (sslmode: string | undefined, ssl: string | undefined): SqlTarget['tls'] => {
  if (sslmode === 'no-verify' || ssl === 'no-verify') return 'no-verify';
  if (sslmode && sslmode !== 'disable') return 'verify';
  if (ssl !== undefined && ssl !== 'false' && ssl !== '0') return 'verify';
  return 'off';
};

function checkedHost(host: string | undefined): string {
  if (!host) throw new NodeFailure('database connection needs a host');
  if (host.startsWith('/') || host.startsWith('@'))
    throw new NodeFailure('database connections over local sockets are refused');
  if (host.includes(',')) throw new NodeFailure('database connections name a single host');
  return host;
}

function fromUrl(dialect: SqlDialectName, raw: string): SqlTarget {
  if (/^[^:]+:\/\/[^/?#]*,/.test(raw)) throw new NodeFailure('database connections name a single host');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new NodeFailure('database connection URL is not a valid URL');
  }
  const settings: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (refusedOptions.has(key.toLowerCase())) {
      throw new NodeFailure(
        `database connection option "${key}" is refused (it reads local files or sockets, or redirects the connection)`,
      );
    }
    if (passedSettings[dialect].includes(key)) settings[key] = value;
  }
  const decode = (part: string) => (part ? decodeURIComponent(part) : undefined);
  return {
    dialect,
    host: checkedHost(decode(url.hostname.replace(/^\[|\]$/g, ''))),
    port: url.port ? Number(url.port) : dialect === 'postgres' ? 5432 : 3306,
    user: decode(url.username),
    password: decode(url.password),
    database: decode(url.pathname.slice(1)),
    tls: tlsMode(url.searchParams.get('sslmode') ?? undefined, url.searchParams.get('ssl') ?? undefined),
    settings,
  };
}

export function sqlTargetOf(connection: DecryptedConnection): SqlTarget {
  if (connection.type !== 'postgres' && connection.type !== 'mysql') {
    throw new NodeFailure(`connection ${connection.id} is a ${connection.type} connection, not a database`);
  }
  const dialect: SqlDialectName = connection.type;
  const data = connection.data;
  const url = text(data.url ?? data.connectionString);
  if (url) return fromUrl(dialect, url);
  const refused = Object.keys(data).find(
    (key) => refusedOptions.has(key.toLowerCase()) && key !== 'host' && key !== 'port',
  );
  if (refused)
    throw new NodeFailure(`database connection option "${refused}" is refused (it reads local files or sockets)`);
  const port = data.port === undefined ? (dialect === 'postgres' ? 5432 : 3306) : Number(data.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new NodeFailure('database connection port is invalid');
  return {
    dialect,
    host: checkedHost(text(data.host)),
    port,
    user: text(data.user ?? data.username),
    password: text(data.password),
    database: text(data.database),
    tls: tlsMode(text(data.sslmode), text(data.ssl)),
    settings: {},
  };
}
