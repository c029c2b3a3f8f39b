import { connect, type Socket } from 'node:net';
import type { DecryptedConnection, EmailIntegrationConfig } from '@weft/contracts';
import nodemailer from 'nodemailer';
import { NodeFailure, type NodeRunContext } from '../../domain/nodes/node-executor.js';
import { OutboundBlockedError, type OutboundGuard } from '../http/outbound-guard.js';
import type { NodeFileSource } from './node-files.js';

/**
 * `integrationNode` with `kind: "email"`: one message through the SMTP server of an `smtp`
 * connection (`{host, port, secure, username, password, from}`), attachments read from blob
 * storage. The host goes through the outbound guard and the message is sent to the address it
 * checked (TLS still verifies the host name), over a socket opened here: a cancel or the timeout
 * destroys it, so no part of the message is sent after the node stopped (nodemailer's own `close`
 * does not stop a send in progress). A mail the server accepted before that stays sent.
 */
const DEFAULT_TIMEOUT_MS = 30_000;
/** Most bytes of all attachments of one message: what common mail servers take (Gmail: 25 MB). */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;

const text = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
const list = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).map(text).filter((item) => item.length > 0);

interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  username?: string;
  password?: string;
  from: string;
}

function smtpSettings(connection: DecryptedConnection): SmtpSettings {
  if (connection.type !== 'smtp') throw new NodeFailure(`connection ${connection.id} is not an smtp connection`);
  const data = connection.data;
  const host = text(data.host);
  const port = Number(data.port ?? (data.secure === true ? 465 : 587));
  const from = text(data.from);
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535 || !from) {
    throw new NodeFailure(`smtp connection ${connection.id} needs host, port and from`);
  }
  return {
    host,
    port,
    secure: data.secure === true,
    username: data.username ? text(data.username) : undefined,
    password: data.password ? text(data.password) : undefined,
    from,
  };
}

export async function sendEmail(
  config: EmailIntegrationConfig,
  context: NodeRunContext,
  deps: { guard: OutboundGuard; files: NodeFileSource },
): Promise<{ messageId: string; accepted: string[] }> {
  const smtp = smtpSettings(await context.connection(config.connectionId));
  const to = list(config.to);
  if (to.length === 0) throw new NodeFailure('email needs at least one "to" address');
  let address: string;
  try {
    address = (await deps.guard.resolveTarget(smtp.host, smtp.port))[0]!.address;
  } catch (error) {
    if (error instanceof OutboundBlockedError) throw new NodeFailure(error.message);
    throw new NodeFailure(`SMTP server ${smtp.host}:${smtp.port} cannot be resolved: ${(error as Error).message}`);
  }
  // One at a time, counting: the same large file listed many times is refused, not read many times.
  const attachments: { filename: string; content: Buffer; contentType: string }[] = [];
  let attachedBytes = 0;
  for (const reference of config.attachments ?? []) {
    const file = await deps.files.read(reference, context.organizationId);
    attachedBytes += file.bytes.byteLength;
    if (attachedBytes > MAX_ATTACHMENT_BYTES)
      throw new NodeFailure(`the attachments are larger than ${MAX_ATTACHMENT_BYTES} bytes in all`);
    attachments.push({ filename: file.name, content: file.bytes, contentType: file.contentType });
  }
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const sockets = new Set<Socket>();
  const transport = nodemailer.createTransport({
    host: address,
    port: smtp.port,
    secure: smtp.secure,
    auth: smtp.username ? { user: smtp.username, pass: smtp.password ?? '' } : undefined,
    tls: { servername: smtp.host },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    getSocket: (_options: unknown, callback: (error: Error | null, socket: { connection: Socket } | false) => void) => {
      const socket = connect({ host: address, port: smtp.port });
      sockets.add(socket);
      let answered = false;
      const answer = (error: Error | null): void => {
        if (answered) return;
        answered = true;
        if (error) callback(error, false);
        else callback(null, { connection: socket });
      };
      socket.once('connect', () => answer(null));
      socket.once('error', (error) => answer(error));
      // A socket destroyed while still connecting (cancel, timeout) emits only 'close'.
      socket.once('close', () => answer(new Error('the connection closed before it was established')));
    },
  } as Parameters<typeof nodemailer.createTransport>[0]);
  let timedOut = false;
  // Settles the send however far nodemailer got: it may never call back on a destroyed socket.
  let stop: (reason: unknown) => void = () => undefined;
  const stopped = new Promise<never>((_resolve, reject) => (stop = reject));
  stopped.catch(() => undefined);
  const abort = (): void => {
    for (const socket of sockets) socket.destroy();
    transport.close();
    stop(timedOut ? new Error('timed out') : context.signal.reason);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    abort();
  }, timeoutMs);
  context.signal.addEventListener('abort', abort, { once: true });
  try {
    context.signal.throwIfAborted();
    const sending = transport.sendMail({
      from: smtp.from,
      to,
      cc: list(config.cc),
      subject: text(config.subject),
      text: config.text === undefined ? undefined : text(config.text),
      html: config.html === undefined ? undefined : text(config.html),
      attachments,
    });
    sending.catch(() => undefined);
    const info = await Promise.race([sending, stopped]);
    const accepted = (info.accepted as (string | { address: string })[]).map((entry) =>
      typeof entry === 'string' ? entry : entry.address,
    );
    return { messageId: info.messageId, accepted };
  } catch (error) {
    context.signal.throwIfAborted();
    if (timedOut) throw new NodeFailure(`SMTP ${smtp.host}:${smtp.port} timed out after ${timeoutMs} ms`);
    throw new NodeFailure(`SMTP ${smtp.host}:${smtp.port} failed: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener('abort', abort);
    transport.close();
  }
}
