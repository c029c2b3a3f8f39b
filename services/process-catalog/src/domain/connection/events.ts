export const CONNECTION_TYPES = [
  'gmail-oauth',
  'outlook-oauth',
  'google-service-account',
  'postgres',
  'mysql',
  'http',
  'smtp',
  'llm',
] as const;
export type ConnectionType = (typeof CONNECTION_TYPES)[number];

/** Secret data encrypted by the application (AES-256-GCM); the domain never sees clear text. */
export interface SealedSecret {
  algorithm: 'aes-256-gcm';
  /** 'organization:connection' when `${organizationId}:${connectionId}` is the GCM additional data; absent on older secrets. */
  boundTo?: 'organization:connection';
  iv: string;
  tag: string;
  ciphertext: string;
}

/** Events of a connection stream (`connection-<id>`). */
export type ConnectionEvent =
  | {
      type: 'ConnectionCreated';
      data: {
        connectionId: string;
        organizationId: string;
        connectionType: ConnectionType;
        name: string;
        sealedData: SealedSecret;
        createdBy: string;
        createdById: string;
        at: string;
      };
    }
  /** New secret data (a refreshed OAuth token), sealed like at creation. */
  | { type: 'ConnectionDataReplaced'; data: { sealedData: SealedSecret; at: string } }
  | { type: 'ConnectionDeleted'; data: { at: string } };

export const CONNECTION_EVENT_TYPES: readonly ConnectionEvent['type'][] = [
  'ConnectionCreated',
  'ConnectionDataReplaced',
  'ConnectionDeleted',
];

export const connectionStreamId = (connectionId: string): string => `connection-${connectionId}`;
