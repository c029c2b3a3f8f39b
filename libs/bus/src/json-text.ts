/**
 * A JSON object or array held as its text: what a bus may answer for the `body` of an HTTP reply
 * when the caller asked for `replyBodyAsJsonText` and the bus had that text at hand. The gateway
 * sends it as it is, instead of parsing it into objects only to serialize them again.
 * `JSON.stringify` of a JsonText gives the same JSON as of the value it holds, so code that did
 * not expect one still writes the right thing.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
