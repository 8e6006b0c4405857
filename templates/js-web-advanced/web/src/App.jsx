import { useCallback, useEffect, useState } from "react";

const TITLE = "__DISPLAY_NAME__";
const DESCRIPTION = "__DESCRIPTION__";

// Every request goes to this app's own server (`web`), which forwards /api/* to the `api` service.
async function api(path, options = {}) {
  const response = await fetch(`/api${path}`, {
    headers: { "content-type": "application/json" },
    ...options,
  });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    throw new Error(problem.detail ?? `${response.status} ${response.statusText}`);
  }
  return response.status === 204 ? null : response.json();
}

function NoteForm({ initial, onSave, onCancel, submitLabel }) {
  const [title, setTitle] = useState(initial?.title ?? "");
  const [body, setBody] = useState(initial?.body ?? "");
  const [busy, setBusy] = useState(false);

  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await onSave({ title, body });
      if (!initial) {
        setTitle("");
        setBody("");
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="note-form" onSubmit={submit}>
      <input value={title} onChange={(e) => setTitle(e.target.value)} placeholder="Title" required maxLength={200} />
      <textarea value={body} onChange={(e) => setBody(e.target.value)} placeholder="Write something…" rows={3} />
      <div className="row">
        <button type="submit" disabled={busy || !title.trim()}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

function Note({ note, onUpdate, onDelete }) {
  const [editing, setEditing] = useState(false);
  if (editing) {
    return (
      <li className="note">
        <NoteForm
          initial={note}
          submitLabel="Save"
          onCancel={() => setEditing(false)}
          onSave={async (changes) => {
            await onUpdate(note.id, changes);
            setEditing(false);
          }}
        />
      </li>
    );
  }
  return (
    <li className="note">
      <div className="note-head">
        <h3>{note.title}</h3>
        <span className="actions">
          <button className="link" onClick={() => setEditing(true)}>
            Edit
          </button>
          <button className="link danger" onClick={() => onDelete(note.id)}>
            Delete
          </button>
        </span>
      </div>
      {note.body && <p>{note.body}</p>}
      <small className="muted">updated {new Date(note.updatedAt).toLocaleString()}</small>
    </li>
  );
}

export default function App() {
  const [notes, setNotes] = useState([]);
  const [query, setQuery] = useState("");
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(true);

  const load = useCallback(async () => {
    try {
      setNotes(await api(`/notes?q=${encodeURIComponent(query)}`));
      setError(null);
    } catch (e) {
      setError(e.message);
    } finally {
      setLoading(false);
    }
  }, [query]);

  useEffect(() => {
    load();
  }, [load]);

  const run = (action) => async (...args) => {
    try {
      await action(...args);
      await load();
    } catch (e) {
      setError(e.message);
    }
  };
  const create = run((note) => api("/notes", { method: "POST", body: JSON.stringify(note) }));
  const update = run((id, note) => api(`/notes/${id}`, { method: "PUT", body: JSON.stringify(note) }));
  const remove = run((id) => api(`/notes/${id}`, { method: "DELETE" }));

  return (
    <main>
      <header>
        <h1>{TITLE}</h1>
        <p className="muted">{DESCRIPTION}</p>
        <p className="muted">
          React front end served by the <b>web</b> service, data from the internal <b>api</b> service.
        </p>
      </header>

      {error && <p className="error">api: {error}</p>}

      <NoteForm onSave={create} submitLabel="Add note" />

      <input
        className="search"
        type="search"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        placeholder="Search notes"
      />
      {loading ? (
        <p className="muted">Loading…</p>
      ) : notes.length === 0 ? (
        <p className="muted">No notes{query ? " match" : " yet"}.</p>
      ) : (
        <ul className="notes">
          {notes.map((note) => (
            <Note key={note.id} note={note} onUpdate={update} onDelete={remove} />
          ))}
        </ul>
      )}
    </main>
  );
}
