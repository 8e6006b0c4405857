// __APP_NAME__ / web: serves the built React app (dist/) and forwards /api/* to the internal
// api service. The platform sets API_URL because `web` dependsOn `api` (devfile.yaml);
// locally it defaults to http://127.0.0.1:3001.
import express from "express";
import { fileURLToPath } from "node:url";

const port = Number(process.env.PORT || "__PORT__");
const apiUrl = (process.env.API_URL || "http://127.0.0.1:3001").replace(/\/+$/, "");
const dist = fileURLToPath(new URL("./dist", import.meta.url));
const FORWARD_HEADERS = ["accept", "content-type", "authorization"];

const app = express();
app.disable("x-powered-by");

app.get("/health", (_req, res) => res.json({ status: "ok", service: "web" }));

// /api/<path> -> <API_URL>/<path>: the browser only ever talks to this server.
app.use("/api", express.raw({ type: "*/*", limit: "1mb" }), async (req, res) => {
  const headers = Object.fromEntries(FORWARD_HEADERS.filter((h) => req.headers[h]).map((h) => [h, req.headers[h]]));
  const hasBody = !["GET", "HEAD"].includes(req.method) && Buffer.isBuffer(req.body) && req.body.length > 0;
  try {
    const upstream = await fetch(apiUrl + req.url, {
      method: req.method,
      headers,
      body: hasBody ? req.body : undefined,
      signal: AbortSignal.timeout(10_000),
    });
    res.status(upstream.status);
    const type = upstream.headers.get("content-type");
    if (type) res.type(type);
    res.send(Buffer.from(await upstream.arrayBuffer()));
  } catch (error) {
    res.status(502).json({ detail: `api service unreachable at ${apiUrl}: ${error.message}` });
  }
});

// The built site; hashed assets are cached for a year, index.html never.
app.use(
  express.static(dist, {
    index: false,
    setHeaders: (res, path) =>
      res.setHeader("cache-control", path.includes("/assets/") ? "public, max-age=31536000, immutable" : "no-cache"),
  }),
);

// SPA fallback: any other GET is a client-side route, answered with index.html.
app.get("/{*splat}", (_req, res) => res.sendFile("index.html", { root: dist, headers: { "cache-control": "no-cache" } }));

const server = app.listen(port, "0.0.0.0", () => console.log(`web listening on http://0.0.0.0:${port}, api at ${apiUrl}`));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
