# One image for every Weft service (docker-compose.yml picks the service with its command):
#   node services/<service>/dist/main.js
# Build: docker build -t weft .

# --- build: install all dependencies, compile every package -----------------------------------
FROM node:24-bookworm AS build
# onnxruntime-node's postinstall downloads CUDA files; its CPU binaries ship in the package.
ENV CI=true \
    PNPM_HOME=/pnpm \
    PATH=/pnpm:$PATH \
    ONNXRUNTIME_NODE_INSTALL=skip
RUN npm install -g --no-fund --no-audit pnpm@12
WORKDIR /app

# Dependencies first: this layer stays cached until the lockfile changes.
# patches/: pnpm-workspace.yaml's patchedDependencies must exist before pnpm fetch (pnpm/pnpm#5268).
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
COPY patches ./patches
RUN pnpm fetch

COPY . .
# The last install drops devDependencies (jest, typescript, s3rver, ...) once the build is done.
RUN pnpm install --frozen-lockfile --offline \
 && pnpm -r run build \
 && pnpm install --frozen-lockfile --offline --prod

# --- runtime ----------------------------------------------------------------------------------
FROM node:24-bookworm-slim AS runtime
# chromium drives webAutomationNode (playwright-core), pdftoppm renders PDFs for ocrNode.
# Build with --build-arg WEFT_RUNTIME_PACKAGES= for a smaller image without them.
ARG WEFT_RUNTIME_PACKAGES="chromium poppler-utils"
RUN if [ -n "$WEFT_RUNTIME_PACKAGES" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends $WEFT_RUNTIME_PACKAGES \
      && rm -rf /var/lib/apt/lists/*; \
    fi
ENV NODE_ENV=production \
    WEFT_HOST=0.0.0.0 \
    WEFT_PORT=8080 \
    WEFT_DATA_DIR=/var/lib/weft
WORKDIR /app
COPY --from=build --chown=node:node /app /app
RUN mkdir -p /var/lib/weft && chown node:node /var/lib/weft
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "infra/healthcheck.mjs"]
# Without a command the image runs everything in one process (embedded mode). The V8 flags are
# those of the embedded process (libs/test-support WEFT_EMBEDDED_NODE_FLAGS says why);
# NODE_OPTIONS cannot carry --heap-growing-percent.
CMD ["node", "--max-semi-space-size=32", "--heap-growing-percent=60", "services/all-in-one/dist/main.js"]
