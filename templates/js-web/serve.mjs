// Serves the built site (dist/) without nginx, for running the app as a plain process
// (`npm run build && node serve.mjs`). It mirrors nginx.conf: static files, /health, and the
// SPA fallback to index.html. The container image uses nginx instead (see Dockerfile).
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL(".", import.meta.url)), "dist");
const port = Number(process.env.PORT || "__PORT__");
const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

async function fileFor(urlPath) {
  const path = normalize(join(root, decodeURIComponent(urlPath)));
  if (path !== root && !path.startsWith(root + sep)) return null; // no escaping dist/
  try {
    const info = await stat(path);
    if (info.isFile()) return path;
    if (info.isDirectory()) return fileFor(join(urlPath, "index.html"));
  } catch {
    // not found: fall through
  }
  return null;
}

const server = createServer(async (req, res) => {
  const { pathname } = new URL(req.url, "http://localhost");
  if (pathname === "/health") {
    res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    return;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD" }).end();
    return;
  }
  let file = await fileFor(pathname).catch(() => null);
  // Unknown paths without a file extension are client-side routes: answer with index.html.
  if (!file && !extname(pathname)) file = join(root, "index.html");
  if (!file) {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    return;
  }
  const hashed = file.includes(`${sep}assets${sep}`);
  res.writeHead(200, {
    "content-type": types[extname(file)] ?? "application/octet-stream",
    "cache-control": hashed ? "public, max-age=31536000, immutable" : "no-cache",
  });
  if (req.method === "HEAD") res.end();
  else createReadStream(file).on("error", () => res.destroy()).pipe(res);
});

server.listen(port, "0.0.0.0", () => console.log(`serving ${root} on http://0.0.0.0:${port}`));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
