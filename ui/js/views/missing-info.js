// Care staff: open a missing-information request by UUID, fill its fields (each rendered by
// its type), submit. Refusals get their own screens: 403 (which access is missing), 404
// (which record is missing), 409 (no longer active); 412 marks each unmet field on the form.
// A slipway://care/missing-info/<uuid> link opens its request here (main.js puts it in the
// shared state; show() hands it over). What is typed is saved as the request's draft (sealed
// by Rust, per environment) once typing pauses, restored with a notice when the request is
// opened again, and removed once it is submitted or the request has ended or is gone (a 404
// about a record the request needs keeps it). A draft kept because its key cannot be read now
// is not overwritten: nothing typed is saved until the form is opened again.
// An answered request (after Submit, or opened again: 409) shows what it holds, and to the
// person who answered it (or a care admin) while the service's window is open, "Correct the
// answer": the same form, filled with the values now, sent to …/amend (no draft is kept).
import { html, render, useEffect, useRef, useState } from "../../vendor/preact-htm.js";
import { DraftNotice } from "../components/draft-notice.js";
import { FieldErrors, Input, TypedField, focusFirstInvalid } from "../components/field.js";
import { draftSaver, endsDraft, loadNotice, savedNotice, withDraft } from "../drafts.js";
import { currentErrors, errorsFor, unplacedErrors } from "../form-state.js";

const SCREENS = {
  forbidden: { title: "You do not have access", hint: "Ask a care admin to grant the access listed below." },
  not_found: { title: "Not found", hint: "The request, or a record it needs, is missing:" },
  not_active: { title: "This request is no longer active", hint: "It was completed, ended, cancelled or has expired; nothing more can be submitted." },
  unauthorized: { title: "Not signed in to care", hint: "The care service does not know the token in use." },
  unavailable: { title: "The care service is unavailable", hint: "" },
  server: { title: "The care service failed", hint: "Try again; if it persists, tell the service's operators." },
  too_large: { title: "Too large", hint: "" },
};

function Screen({ res }) {
  const s = SCREENS[res.kind] || { title: "The request was refused", hint: "" };
  const details = res.errors.map((e) => html`<li><code>${e.code}</code> ${e.message}${e.fields.length ? html` <span class="muted">(${e.fields.join(", ")})</span>` : null}</li>`);
  return html`<div id="mi-screen" class=${"screen bad"} data-kind=${res.kind} role="alert">
    <h3>${s.title}${res.status ? html` <span class="badge">${res.status}</span>` : null}</h3>
    ${s.hint ? html`<p>${s.hint}</p>` : null}
    ${details.length ? html`<ul>${details}</ul>` : html`<p>${res.error}</p>`}
  </div>`;
}

/** A date and time as the reader's locale writes it (the service sends RFC 3339). */
const when = (t) => (t ? new Date(t).toLocaleString() : "");

function Answer({ answer, onCorrect }) {
  const latest = answer.amendments.length ? answer.amendments[answer.amendments.length - 1] : null;
  return html`<section id="mi-answer" class="box" aria-labelledby="mi-answer-title">
    <h3 id="mi-answer-title">The answer${answer.amended ? html` <span class="badge plain" data-amended>amended</span>` : null}</h3>
    <p class="muted">Answered${answer.answeredBy ? ` by ${answer.answeredBy.name}` : ""} on ${when(answer.answeredAt)}${latest
      ? `; last corrected${latest.by ? ` by ${latest.by.name}` : ""} on ${when(latest.at)}`
      : ""}.</p>
    <dl class="answer">${answer.fields.map((f) => html`<dt>${f.label}</dt><dd data-field=${f.uuid}>${f.value ?? html`<span class="muted">no value</span>`}</dd>`)}</dl>
    ${answer.amendments.length
      ? html`<h4>Corrections</h4><ol id="mi-amendments">${answer.amendments.map(
          (a) => html`<li>${when(a.at)}${a.by ? ` · ${a.by.name}` : ""}: ${a.fields.join(", ")}</li>`,
        )}</ol>`
      : null}
    ${answer.amendable
      ? html`<p><button type="button" id="mi-amend" class="primary" onClick=${onCorrect}>Correct the answer</button>
          <span class="muted"> You can correct it until ${when(answer.amendableUntil)}.</span></p>`
      : null}
  </section>`;
}

function MissingInfo({ api, link }) {
  const [uuid, setUuid] = useState(link ? link.uuid : "");
  const [busy, setBusy] = useState(false);
  const [request, setRequest] = useState(null); // the GET answer
  const [values, setValues] = useState({});
  const [outcome, setOutcome] = useState(null); // a failure or {ok, value}
  const [answer, setAnswer] = useState(null); // an answered request's …/answer
  const [amending, setAmending] = useState(false); // the form corrects an answer
  const [uuidError, setUuidError] = useState([]);
  const [draftNote, setDraftNote] = useState(null); // drafts.js's loadNotice()
  const [keyNotice, setKeyNotice] = useState(null);
  const [savedAt, setSavedAt] = useState(null); // when the draft was last saved (ms since the epoch)
  const saver = useRef(null); // the open request's draft saver
  const blank = useRef({}); // the open request's values before anything was typed
  // Which opening is the latest: one overtaken (Open, then a link or a notification for
  // another request) stops at its next answer, so the form and its draft are the latest's.
  const opening = useRef(0);

  async function open(ev) {
    ev.preventDefault();
    await openRequest(uuid.trim());
  }

  async function openRequest(id) {
    const mine = ++opening.current;
    const overtaken = () => opening.current !== mine;
    // What was typed into the request open until now is saved before another opens.
    const previous = saver.current;
    saver.current = null;
    if (previous) await previous.flush();
    if (overtaken()) return;
    setBusy(true);
    setOutcome(null);
    setAnswer(null);
    setAmending(false);
    setUuidError([]);
    setDraftNote(null);
    const res = await api.careMissingInfo(id);
    if (overtaken()) return;
    if (!res.ok) {
      setBusy(false);
      setRequest(null);
      if (res.kind === "invalid") setUuidError([res.error]);
      else setOutcome(res);
      // An ended request, or one this environment's service does not know, keeps no draft.
      if (endsDraft(res)) await api.careDraftClear("missing_info", id);
      // An answered one still shows what it holds.
      if (res.kind === "not_active") await loadAnswer(id, overtaken);
      return;
    }
    const uuid = res.value.uuid;
    const init = {};
    for (const f of res.value.fields) init[f.uuid] = f.type === "BOOLEAN" ? "false" : "";
    const draft = await api.careDraftLoad("missing_info", uuid);
    if (overtaken()) return;
    blank.current = init;
    setBusy(false);
    const note = draft.ok ? loadNotice(draft.value) : { kind: "lost", text: draft.error, keyNotice: null };
    setDraftNote(note);
    setValues(note && note.kind === "restored" ? withDraft(init, draft.value.document) : init);
    setRequest(res.value);
    if (note && note.kind === "kept") return;
    saver.current = draftSaver({
      save: (doc) => api.careDraftSave("missing_info", uuid, doc),
      clear: () => api.careDraftClear("missing_info", uuid),
      onSaved: (r) => {
        setKeyNotice(savedNotice(r));
        if (r.ok && !overtaken()) setSavedAt(r.value.saved_at);
      },
    });
  }

  async function loadAnswer(id, overtaken = () => false) {
    const a = await api.careAnswer(id);
    if (!overtaken() && a.ok) setAnswer(a.value);
  }

  function correct() {
    const filled = {};
    for (const f of answer.fields) filled[f.uuid] = f.value ?? (f.type === "BOOLEAN" ? "false" : "");
    blank.current = filled;
    setValues(filled);
    setOutcome(null);
    setDraftNote(null);
    setAmending(true);
    setRequest({ uuid: answer.uuid, drugProgram: answer.drugProgram, fields: answer.fields.map(({ value, ...f }) => f) });
  }

  function type(fieldUuid, v) {
    const next = { ...values, [fieldUuid]: v };
    setValues(next);
    if (saver.current) saver.current.schedule(next);
  }

  async function discard() {
    if (saver.current) await saver.current.clear();
    setValues(blank.current);
    setDraftNote(null);
    setOutcome(null);
  }

  // Each link is a new object: the same request asked for again is opened again.
  useEffect(() => {
    if (!link) return;
    setUuid(link.uuid);
    openRequest(link.uuid);
  }, [link]);

  async function submit(ev) {
    ev.preventDefault();
    setBusy(true);
    const fields = request.fields.map((f) => ({ ...f, value: values[f.uuid] ?? "" }));
    if (amending) {
      const res = await api.careAmendMissingInfo(request.uuid, fields);
      setBusy(false);
      setOutcome({ ...res, sent: { ...values }, amended: true });
      if (res.ok || (res.kind !== "unmet" && res.kind !== "invalid")) {
        setRequest(null);
        setAmending(false);
        await loadAnswer(request.uuid);
      } else focusFirstInvalid("mi-form");
      return;
    }
    const res = await api.careSubmitMissingInfo(request.uuid, fields);
    // Submitted, or the request has ended or is gone: its draft goes. Otherwise it stays.
    if (endsDraft(res)) {
      if (saver.current) await saver.current.clear();
      else await api.careDraftClear("missing_info", request.uuid);
      saver.current = null;
      setDraftNote(null);
    }
    setBusy(false);
    // What was sent, so an error stays with the value it was about.
    setOutcome({ ...res, sent: { ...values } });
    if (res.ok || (res.kind !== "unmet" && res.kind !== "invalid")) setRequest(null);
    else focusFirstInvalid("mi-form");
    if (res.ok) await loadAnswer(request.uuid);
  }

  const unmet =
    outcome && !outcome.ok && (outcome.kind === "unmet" || outcome.kind === "invalid")
      ? currentErrors(outcome.fieldErrors, outcome.sent, values)
      : {};
  const rendered = new Set(request ? request.fields.map((f) => f.uuid) : []);
  const leftover = request ? unplacedErrors(unmet, rendered) : [];

  return html`
    <h2>Missing information</h2>
    <form id="mi-open-form" class="inline" onSubmit=${open}>
      <${Input} label="Request UUID" name="mi-uuid" value=${uuid} onValue=${setUuid} errors=${uuidError} placeholder="5f0c8b8e-1d2a-4c1e-9a57-0a4a5c1d7e01" />
      <button type="submit" id="mi-open" class="small" disabled=${busy}>${busy && !request ? "Opening…" : "Open"}</button>
    </form>
    ${outcome && outcome.ok && !outcome.amended
      ? html`<div id="mi-screen" class="screen" data-kind="done" role="status"><h3 class="ok">Submitted</h3>
          <p>${outcome.value.updatedFields ? outcome.value.updatedFields.length : 0} field(s) updated; the request is now ${outcome.value.status}.</p></div>`
      : null}
    ${outcome && outcome.ok && outcome.amended
      ? html`<div id="mi-screen" class="screen" data-kind="corrected" role="status"><h3 class="ok">${outcome.value.amended ? "Corrected" : "Nothing to correct"}</h3>
          <p>${outcome.value.amended
            ? `${outcome.value.changedFields.length} field(s) changed; the earlier values are kept in the request's history.`
            : "The values are the same as the answer's; nothing was changed."}</p></div>`
      : null}
    ${outcome && !outcome.ok && !request ? html`<${Screen} res=${outcome} />` : null}
    ${answer && !request ? html`<${Answer} answer=${answer} onCorrect=${correct} />` : null}
    ${!request && !outcome && !answer ? html`<p class="muted empty">Open a request to see the fields it asks for.</p>` : null}
    ${request
      ? html`<form id="mi-form" class="box" onSubmit=${submit} novalidate data-saved-at=${savedAt ?? undefined}>
          <div class="row"><h3>${amending ? `Correcting the answer · ${request.drugProgram}` : request.drugProgram}</h3><span class="muted">request ${request.uuid}${request.expirationDate ? ` · expires ${request.expirationDate}` : ""}</span></div>
          <${DraftNotice} note=${draftNote} keyNotice=${keyNotice} onDiscard=${discard} />
          ${request.fields.length === 0 ? html`<p class="muted empty">This request asks for no fields.</p>` : null}
          <div class="grid">
            ${request.fields.map((f) => html`<${TypedField} key=${f.uuid} def=${f} value=${values[f.uuid]} errors=${errorsFor(unmet, f.uuid)}
              onValue=${(v) => type(f.uuid, v)} />`)}
          </div>
          ${outcome && !outcome.ok && outcome.kind === "unmet" && Object.keys(unmet).length
            ? html`<p class="error summary" role="alert">${outcome.error}</p>`
            : null}
          ${leftover.length ? html`<${FieldErrors} id="mi-other-errors" messages=${leftover.map((e) => e.message)} />` : null}
          <button type="submit" id="mi-submit" class="primary" disabled=${busy}>${busy ? "Submitting…" : amending ? "Save the correction" : "Submit"}</button>
          ${amending
            ? html` <button type="button" id="mi-amend-cancel" class="small" disabled=${busy} onClick=${() => {
                setAmending(false);
                setRequest(null);
              }}>Cancel</button>`
            : null}
        </form>`
      : null}`;
}

export function mount(root, { api, shared }) {
  const draw = (link) => render(html`<${MissingInfo} api=${api} link=${link} />`, root);
  draw(null);
  return () => {
    const link = shared && shared.missingInfo;
    if (!link) return;
    shared.missingInfo = null;
    draw({ ...link });
  };
}
