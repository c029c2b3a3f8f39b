/** PGlite and pg hand jsonb back as parsed values or as text, depending on the driver. */
export const parseJson = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;
