// Container healthcheck for the Weft services (docker-compose.yml): exit 0 when the service
// answers GET /readyz on WEFT_PORT. The runtime image has no curl, but it has node.
const port = process.env.WEFT_PORT ?? '8080';
try {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
