// __APP_NAME__ / api: the internal REST service (plain node:http, no dependencies).
// Only `web` talks to it (devfile exposure: internal). Port 3001 unless PORT says otherwise.
//
//   GET    /health            readiness probe
//   GET    /notes             list notes (newest first); ?q= filters by text
//   POST   /notes             create   {"title": "...", "body": "..."}
//   GET    /notes/:id         read
//   PUT    /notes/:id         replace  {"title": "...", "body": "..."}
//   DELETE /notes/:id         delete
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

const port = Number(process.env.PORT || "3001");
const MAX_BODY = 64 * 1024;

/** @type {Map<string, {id: string, title: string, body: string, createdAt: string, updatedAt: string}>} */
const notes = new Map();
seed({ title: "Welcome", body: "Notes live in the api service; the web service proxies /api/* to it." });

function seed(input) {
  const now = new Date().toISOString();
  const note = { id: randomUUID(), ...input, createdAt: now, updatedAt: now };
  notes.set(note.id, note);
  return note;
}

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function send(res, status, data) {
  if (data === undefined) {
    res.writeHead(status).end();
    return;
  }
  const body = JSON.stringify(data);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

async function readJson(req) {
  let size = 0;
  const chunks = [];
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, "request body too large");
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
  } catch {
    throw new HttpError(400, "request body is not valid JSON");
  }
}

function validate(input) {
  const title = typeof input.title === "string" ? input.title.trim() : "";
  const body = typeof input.body === "string" ? input.body : "";
  if (!title) throw new HttpError(422, "title is required");
  if (title.length > 200) throw new HttpError(422, "title is longer than 200 characters");
  if (body.length > 10_000) throw new HttpError(422, "body is longer than 10000 characters");
  return { title, body };
}

function find(id) {
  const note = notes.get(id);
  if (!note) throw new HttpError(404, `note ${id} not found`);
  return note;
}

async function route(req, res) {
  const url = new URL(req.url, "http://localhost");
  const parts = url.pathname.split("/").filter(Boolean);

  if (url.pathname === "/health") return send(res, 200, { status: "ok", service: "api" });

  if (parts[0] === "notes" && parts.length === 1) {
    if (req.method === "GET") {
      const q = (url.searchParams.get("q") ?? "").toLowerCase();
      const list = [...notes.values()]
        .filter((n) => !q || `${n.title} ${n.body}`.toLowerCase().includes(q))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      return send(res, 200, list);
    }
    if (req.method === "POST") return send(res, 201, seed(validate(await readJson(req))));
  }

  if (parts[0] === "notes" && parts.length === 2) {
    const id = decodeURIComponent(parts[1]);
    if (req.method === "GET") return send(res, 200, find(id));
    if (req.method === "PUT") {
      const note = find(id);
      const updated = { ...note, ...validate(await readJson(req)), updatedAt: new Date().toISOString() };
      notes.set(id, updated);
      return send(res, 200, updated);
    }
    if (req.method === "DELETE") {
      find(id);
      notes.delete(id);
      return send(res, 204);
    }
  }

  throw new HttpError(404, `no route for ${req.method} ${url.pathname}`);
}

const server = createServer((req, res) => {
  route(req, res).catch((error) => {
    const status = error instanceof HttpError ? error.status : 500;
    if (status === 500) console.error(error);
    if (!res.headersSent) send(res, status, { detail: status === 500 ? "internal error" : error.message });
  });
});

server.listen(port, "0.0.0.0", () => console.log(`api listening on http://0.0.0.0:${port}`));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
