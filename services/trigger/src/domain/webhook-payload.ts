import { badRequest, ProblemError, type UploadedForm } from '@weft/contracts';

/** The media type of a Content-Type header, lower-case, without parameters. */
export const mediaTypeOf = (contentType: string | undefined): string =>
  (contentType ?? '').split(';')[0]!.trim().toLowerCase();

const isJson = (mediaType: string): boolean => mediaType === 'application/json' || mediaType.endsWith('+json');

/** Text PostgreSQL's jsonb cannot store (NUL, lone surrogates) is refused at the door, as for JSON bodies. */
function assertStorableText(text: string, path: string): void {
  if (text.includes('\u0000') || !text.isWellFormed()) {
    throw badRequest('the body contains text that cannot be stored', [
      { path, message: 'must not contain a NUL character (\\u0000) or a lone UTF-16 surrogate' },
    ]);
  }
}

/** A form's fields, with each stored file as a reference under its field name (an array when the field repeats). */
function formPayload(form: UploadedForm): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(form.fields ?? {})) {
    for (const text of Array.isArray(value) ? value : [value]) assertStorableText(text, `/${name}`);
    payload[name] = value;
  }
  for (const file of form.files ?? []) {
    const reference = { name: file.name, url: file.url, size: file.size, contentType: file.contentType };
    const earlier = payload[file.field];
    payload[file.field] =
      earlier === undefined ? reference : Array.isArray(earlier) ? [...earlier, reference] : [earlier, reference];
  }
  return payload;
}

/**
 * The webhook input node's output (spec "Webhook trigger"): a JSON body as sent, a form's fields and
 * file references, plain text as `{text}`. Any other media type is a 415.
 */
export function webhookPayload(contentType: string | undefined, body: unknown): unknown {
  const mediaType = mediaTypeOf(contentType);
  if (body === undefined || body === null || body === '') {
    if (mediaType === '' || isJson(mediaType)) return {};
  }
  if (isJson(mediaType)) return body;
  if (mediaType === 'multipart/form-data') return formPayload(body as UploadedForm);
  if (mediaType === 'text/plain') {
    const text = typeof body === 'string' ? body : '';
    assertStorableText(text, '/text');
    return { text };
  }
  throw new ProblemError(
    415,
    `a webhook takes application/json, multipart/form-data or text/plain, not "${mediaType}"`,
  );
}
