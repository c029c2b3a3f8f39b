export interface ApiKeyIssued {
  type: 'ApiKeyIssued';
  data: {
    apiKeyId: string;
    organizationId: string;
    name: string;
    userName: string;
    userId: string;
    /** null: every process of the organization. */
    processIds: string[] | null;
    system: boolean;
    /** SHA-256 of the key; the key itself is never stored. */
    keyHash: string;
    /** First characters of the key, so a person can tell keys apart. */
    keyPrefix: string;
    issuedAt: string;
    issuedBy: string;
    issuedById: string;
  };
}

export interface ApiKeyRevoked {
  type: 'ApiKeyRevoked';
  data: { apiKeyId: string; organizationId: string; revokedAt: string; revokedBy: string; revokedById: string };
}

export type ApiKeyEvent = ApiKeyIssued | ApiKeyRevoked;

export const apiKeyStream = (apiKeyId: string): string => `apikey-${apiKeyId}`;
