/** Where chunks of messages larger than max_payload travel (the NATS permissions grant these). */

/** The subjects where the serving replicas of `requestSubject` take chunks (nats-chunk-endpoint.ts). */
export const natsChunkSubjects = (requestSubject: string): string => `${requestSubject}.chunked.*`;

/** The stream holding the chunks of a work queue's large messages (nats-large-work.ts). */
export const workChunkStream = (queueStream: string): string => `${queueStream}_CHUNKS`;

/** Every chunk subject of a work queue (the chunk stream's subjects). */
export const workChunkSubjects = (queueSubject: string): string => `${queueSubject}.chunks.>`;
