import type { Logger } from '@weft/observability';
import type { DeadLetter, WorkMessage } from './bus.js';

/** True once the dead letter is recorded (ack it); false keeps the message queued for a later try. */
export async function deadLettered(
  deadLetter: DeadLetter<unknown>,
  message: WorkMessage<unknown>,
  error: unknown,
  logger: Logger,
): Promise<boolean> {
  try {
    await deadLetter.record(message, error);
    return true;
  } catch (recordError) {
    logger.error(
      { err: recordError, deliveryCount: message.deliveryCount },
      'dead letter could not be recorded; the message stays queued',
    );
    return false;
  }
}
