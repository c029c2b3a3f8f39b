import { headers as createHeaders, type MsgHdrs } from '@nats-io/transport-node';

export function toNatsHeaders(record: Record<string, string>): MsgHdrs {
  const natsHeaders = createHeaders();
  for (const [key, value] of Object.entries(record)) natsHeaders.set(key, value);
  return natsHeaders;
}

/** First value of every header; JetStream's own `Nats-*` headers included. */
export function fromNatsHeaders(natsHeaders: MsgHdrs | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  if (!natsHeaders) return record;
  for (const [key, values] of natsHeaders) {
    if (values[0] !== undefined) record[key] = values[0];
  }
  return record;
}
