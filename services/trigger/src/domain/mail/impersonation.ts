/** Whether a service account may act as `target`: an exact address or a `*@domain` entry allows it. */
export function impersonationAllowed(target: string, allowed: readonly string[]): boolean {
  const address = target.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at <= 0) return false;
  const domain = address.slice(at + 1);
  return allowed.some((entry) => {
    const pattern = entry.trim().toLowerCase();
    return pattern.startsWith('*@') ? pattern.slice(2) === domain : pattern === address;
  });
}
