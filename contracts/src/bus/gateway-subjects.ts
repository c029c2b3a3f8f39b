// Gateway-owned subjects (organizations and API keys are served by the gateway itself).
export {};
