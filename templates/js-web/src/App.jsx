import { useEffect, useState } from "react";

const TITLE = "__DISPLAY_NAME__";
const DESCRIPTION = "__DESCRIPTION__";

// A tiny client-side router on the History API. Deep links such as /tasks work after a reload
// because the server answers unknown paths with index.html (the SPA fallback in nginx.conf).
function usePath() {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const onPop = () => setPath(window.location.pathname);
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  const navigate = (to) => {
    if (to !== window.location.pathname) {
      window.history.pushState({}, "", to);
      setPath(to);
    }
  };
  return [path, navigate];
}

function Link({ to, navigate, current, children }) {
  return (
    <a
      href={to}
      className={current === to ? "active" : undefined}
      onClick={(event) => {
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

function Home({ navigate }) {
  const [count, setCount] = useState(0);
  return (
    <section>
      <h1>{TITLE}</h1>
      <p className="lead">{DESCRIPTION}</p>
      <p>
        A React single-page app built with Vite and served by nginx. Edit <code>src/App.jsx</code>{" "}
        and save: <code>npm run dev</code> reloads the page instantly.
      </p>
      <div className="row">
        <button onClick={() => setCount((c) => c + 1)}>Clicked {count} times</button>
        <button className="secondary" onClick={() => navigate("/tasks")}>
          Open the task list
        </button>
      </div>
    </section>
  );
}

function loadTasks() {
  try {
    return JSON.parse(localStorage.getItem("tasks") ?? "[]");
  } catch {
    return [];
  }
}

function Tasks() {
  const [tasks, setTasks] = useState(loadTasks);
  const [text, setText] = useState("");
  useEffect(() => localStorage.setItem("tasks", JSON.stringify(tasks)), [tasks]);

  const add = (event) => {
    event.preventDefault();
    const title = text.trim();
    if (!title) return;
    setTasks((ts) => [...ts, { id: crypto.randomUUID(), title, done: false }]);
    setText("");
  };
  const toggle = (id) => setTasks((ts) => ts.map((t) => (t.id === id ? { ...t, done: !t.done } : t)));
  const remove = (id) => setTasks((ts) => ts.filter((t) => t.id !== id));
  const open = tasks.filter((t) => !t.done).length;

  return (
    <section>
      <h1>Tasks</h1>
      <p className="muted">Kept in your browser (localStorage). {open} open.</p>
      <form className="row" onSubmit={add}>
        <input value={text} onChange={(e) => setText(e.target.value)} placeholder="What needs doing?" />
        <button type="submit">Add</button>
      </form>
      <ul className="tasks">
        {tasks.map((t) => (
          <li key={t.id} className={t.done ? "done" : undefined}>
            <label>
              <input type="checkbox" checked={t.done} onChange={() => toggle(t.id)} /> {t.title}
            </label>
            <button className="link" onClick={() => remove(t.id)} aria-label={`Delete ${t.title}`}>
              ✕
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function About() {
  return (
    <section>
      <h1>About</h1>
      <p>
        Scaffolded by Slipway from the <code>js-web</code> template: React + Vite, built to static files
        in <code>dist/</code> and served by nginx, which sends every unknown path to{" "}
        <code>index.html</code> so client-side routes survive a reload.
      </p>
    </section>
  );
}

function NotFound({ navigate }) {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        Nothing lives at <code>{window.location.pathname}</code>.{" "}
        <a href="/" onClick={(e) => (e.preventDefault(), navigate("/"))}>
          Go home
        </a>
      </p>
    </section>
  );
}

export default function App() {
  const [path, navigate] = usePath();
  const pages = { "/": Home, "/tasks": Tasks, "/about": About };
  const Page = pages[path] ?? NotFound;
  return (
    <>
      <nav>
        <strong>{TITLE}</strong>
        <Link to="/" navigate={navigate} current={path}>Home</Link>
        <Link to="/tasks" navigate={navigate} current={path}>Tasks</Link>
        <Link to="/about" navigate={navigate} current={path}>About</Link>
      </nav>
      <main>
        <Page navigate={navigate} />
      </main>
    </>
  );
}
