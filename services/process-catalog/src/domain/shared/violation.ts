/** One reason a command is refused; `path` is a JSON pointer into the request. */
export interface Violation {
  path: string;
  message: string;
}
