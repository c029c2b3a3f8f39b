/**
 * A batch's rows travel as one JSON array parameter read by a recordset function. As `jsonb` it is
 * parsed once (as `json`, each nested value is copied out as text and parsed again when stored
 * into a jsonb column: most of the writing connection's JSON work at load), but a jsonb value holds
 * at most 255 MB (SQLSTATE 54000), a `json` one about 1 GB: a large batch is read as `json`.
 * The limit is on the jsonb form, which can be several times the text (a small number takes a
 * 4-byte entry and a numeric), hence the margin.
 */
const LARGEST_JSONB_TEXT = 32 * 1024 * 1024;

export interface JsonRecordset {
  /** `jsonb_to_recordset` or `json_to_recordset` */
  fn: string;
  /** The parameter's cast and the type of the recordset's nested JSON columns: `jsonb` or `json`. */
  type: string;
}

export function jsonRecordsetFor(text: string): JsonRecordset {
  return text.length <= LARGEST_JSONB_TEXT
    ? { fn: 'jsonb_to_recordset', type: 'jsonb' }
    : { fn: 'json_to_recordset', type: 'json' };
}
