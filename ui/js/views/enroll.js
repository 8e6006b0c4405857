// Care staff: the whole enrollment document as one form. The state has the request's shape;
// every change is checked by the service's own validator (through Rust) and each error is
// placed on its field path; the draft is saved (sealed by Rust) once typing pauses, so it
// survives a crash or a closed window, and restored with a notice. Which keys a party or
// contact has is layout; every rule is the validator's.
import { html, render, useEffect, useRef, useState } from "../../vendor/preact-htm.js";
import { DraftNotice } from "../components/draft-notice.js";
import { Input, focusFirstInvalid } from "../components/field.js";
import { draftSaver, loadNotice, savedNotice } from "../drafts.js";
import { appendAt, currentErrors, errorsFor, getPath, inputValue, removePath, setPath, unplacedErrors } from "../form-state.js";

const PERSON = [["firstName", "First name"], ["middleName", "Middle name"], ["lastName", "Last name", { required: true }], ["gender", "Gender", { options: "genders" }], ["dateOfBirth", "Date of birth", { type: "date" }]];
const PARTY_FIELDS = {
  patient: PERSON,
  physician: [...PERSON, ["specialty", "Specialty"], ["suffix", "Suffix"], ["npi", "NPI"]],
  staff: PERSON,
  caregiver: PERSON,
  pharmacy: [["name", "Name"], ["npi", "NPI"]],
  organization: [["name", "Name"], ["npi", "NPI"]],
};
const PARTIES = [["patient", "Patient"], ["physician", "Physician"], ["staff", "Staff"], ["caregiver", "Caregiver"], ["pharmacy", "Pharmacy"], ["organization", "Organization"]];
const CONTACTS = {
  addresses: ["Address", [["addressLine1", "Address line 1", { required: true, wide: true }], ["addressLine2", "Address line 2", { wide: true }], ["city", "City", { required: true }], ["state", "State", { required: true }], ["postalCode", "Postal code", { required: true }], ["country", "Country", { required: true }]]],
  phones: ["Phone", [["countryCode", "Country code", { required: true }], ["phoneNumber", "Phone number", { required: true }], ["ext", "Extension"]]],
  emails: ["E-mail", [["emailAddress", "E-mail address", { required: true, type: "email" }]]],
  faxes: ["Fax", [["countryCode", "Country code", { required: true }], ["faxNumber", "Fax number", { required: true }], ["ext", "Extension"]]],
};
const LISTS = {
  consents: ["Consent", [["id", "Id", { required: true }], ["name", "Data use purpose", { required: true, hint: "contains the purpose's external ID, e.g. DUP-TREATMENT" }], ["effectiveDate", "Effective date", { type: "date" }], ["expirationDate", "Expiration date", { type: "date" }]]],
  insurances: ["Insurance", [["id", "Id"], ["companyName", "Company"], ["groupName", "Group"], ["memberNumber", "Member number"], ["relationshipToMember", "Relationship to member"], ["policyHolderFirstName", "Policy holder first name"], ["policyHolderLastName", "Policy holder last name"], ["effectiveDate", "Effective date", { type: "date" }], ["expirationDate", "Expiration date", { type: "date" }]]],
  prescriptions: ["Prescription", [["id", "Id", { required: true }], ["drugNdc", "Drug NDC", { required: true, hint: "contains a product ID of the program, e.g. PROD-1001" }], ["quantity", "Quantity"], ["numberOfRefills", "Number of refills", { type: "number", kind: "integer" }]]],
};

export const EMPTY = { vendorName: "", programName: "", enrollmentDate: "", patient: { id: "", lastName: "" } };

function Enroll({ api }) {
  const [doc, setDoc] = useState(EMPTY);
  const [options, setOptions] = useState({ genders: [], contact_types: [] });
  const [check, setCheck] = useState({ fieldErrors: {} });
  const [touched, setTouched] = useState(new Set());
  const [showAll, setShowAll] = useState(false);
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState(null);
  const [note, setNote] = useState(null); // drafts.js's loadNotice()
  const [keyNotice, setKeyNotice] = useState(null);
  const timers = useRef({});
  const loaded = useRef(false);
  // A document that is not typing (the restored draft, the empty form): not saved as a draft.
  const unsaved = useRef(EMPTY);
  const saver = useRef(null);
  // A draft kept because its key cannot be read now is not overwritten by what is typed.
  const kept = useRef(false);

  useEffect(() => {
    api.careEnrollmentOptions().then((r) => r.ok && setOptions(r.value));
    saver.current = draftSaver({
      save: (d) => api.careDraftSave("enrollment", null, d),
      clear: () => api.careDraftClear("enrollment"),
      onSaved: (r) => setKeyNotice(savedNotice(r)),
    });
    api.careDraftLoad("enrollment").then((r) => {
      if (r.ok && r.value.document) {
        unsaved.current = r.value.document;
        setDoc(r.value.document);
      }
      const n = r.ok ? loadNotice(r.value) : { kind: "lost", text: r.error, keyNotice: null };
      kept.current = Boolean(n && n.kind === "kept");
      setNote(n);
      loaded.current = true;
    });
  }, []);

  // Check with the service's validator, and save the draft, shortly after each change.
  useEffect(() => {
    clearTimeout(timers.current.check);
    timers.current.check = setTimeout(async () => {
      const r = await api.careCheckEnrollment(doc);
      if (r.ok) setCheck(r.value);
    }, 200);
    if (loaded.current && !kept.current && doc !== unsaved.current) saver.current.schedule(doc);
  }, [doc]);

  // The answer (or the list of problems) is shown where the user looks.
  useEffect(() => {
    const box = answer && document.getElementById("enroll-result");
    if (box && box.scrollIntoView) box.scrollIntoView({ block: "nearest" });
  }, [answer]);

  const rendered = new Set();
  const serverErrors = answer && !answer.ok ? currentErrors(answer.fieldErrors, answer.sent, doc) : {};
  const errs = (path) => {
    const own = showAll || touched.has(path) ? errorsFor(check.fieldErrors, path) : [];
    return [...own, ...errorsFor(serverErrors, path).filter((m) => !own.includes(m))];
  };
  const field = (path, label, opts = {}) => {
    rendered.add(path);
    const type = opts.options ? "select" : opts.type || "text";
    const value = getPath(doc, path);
    return html`<${Input} key=${path} label=${label} name=${path} type=${type} value=${value ?? (type === "checkbox" ? false : "")} errors=${errs(path)}
      required=${opts.required} wide=${opts.wide} hint=${opts.hint} options=${opts.options ? options[opts.options] : undefined}
      onValue=${(v) => {
        setDoc((d) => setPath(d, path, inputValue(opts.kind || (type === "checkbox" ? "boolean" : "text"), v)));
        setTouched((t) => (t.has(path) ? t : new Set([...t, path])));
      }} />`;
  };
  const remove = (path) => setDoc((d) => removePath(d, path));
  const add = (path, item) => setDoc((d) => appendAt(d, path, item));

  function contacts(partyPath) {
    return Object.entries(CONTACTS).map(([key, [label, keys]]) => {
      const list = getPath(doc, `${partyPath}.${key}`) || [];
      return html`<div class="repeat-list">
        ${list.map((_, i) => {
          const p = `${partyPath}.${key}[${i}]`;
          return html`<div class="repeat" key=${p}>
            <div class="repeat-head"><strong>${label} ${i + 1}</strong><button type="button" class="small" onClick=${() => remove(p)}>Remove</button></div>
            <div class="grid three">
              ${field(`${p}.id`, "Id", { required: true })}
              ${field(`${p}.type`, "Type", { required: true, options: "contact_types" })}
              ${keys.map(([k, l, o]) => field(`${p}.${k}`, l, o))}
              ${field(`${p}.primary`, "Primary", { type: "checkbox" })}
            </div>
          </div>`;
        })}
        <button type="button" class="small add" data-add=${`${partyPath}.${key}`} onClick=${() => add(`${partyPath}.${key}`, { id: "", type: "" })}>Add ${label.toLowerCase()}</button>
      </div>`;
    });
  }

  function party([key, label]) {
    const present = getPath(doc, key) !== undefined;
    const optional = key !== "patient";
    return html`<fieldset key=${key} id=${`party-${key}`}>
      <legend>${label}${optional ? html` <label class="check inline-check"><input type="checkbox" name=${`include-${key}`} checked=${present}
        onChange=${(e) => (e.currentTarget.checked ? setDoc((d) => setPath(d, key, { id: "" })) : remove(key))} /> include</label>` : null}</legend>
      ${present
        ? html`<div class="grid three">
            ${field(`${key}.id`, "Source system id", { required: true })}
            ${PARTY_FIELDS[key].map(([k, l, o]) => field(`${key}.${k}`, l, o))}
          </div>
          ${contacts(key)}`
        : html`<p class="muted">Not part of this enrollment.</p>`}
    </fieldset>`;
  }

  function list(key) {
    const [label, keys] = LISTS[key];
    const items = getPath(doc, key) || [];
    return html`<fieldset key=${key} id=${`list-${key}`}>
      <legend>${label}s</legend>
      ${items.length === 0 ? html`<p class="muted">None.</p>` : null}
      ${items.map((_, i) => html`<div class="repeat" key=${`${key}[${i}]`}>
        <div class="repeat-head"><strong>${label} ${i + 1}</strong><button type="button" class="small" onClick=${() => remove(`${key}[${i}]`)}>Remove</button></div>
        <div class="grid three">${keys.map(([k, l, o]) => field(`${key}[${i}].${k}`, l, o))}</div>
      </div>`)}
      <button type="button" class="small add" data-add=${key} onClick=${() => add(key, {})}>Add ${label.toLowerCase()}</button>
    </fieldset>`;
  }

  function additional() {
    const objects = getPath(doc, "additionalObjects") || [];
    return html`<fieldset id="list-additionalObjects">
      <legend>Additional objects</legend>
      ${objects.map((o, i) => {
        const p = `additionalObjects[${i}]`;
        const records = o.records || [];
        return html`<div class="repeat" key=${p}>
          <div class="repeat-head"><strong>Object ${i + 1}</strong><button type="button" class="small" onClick=${() => remove(p)}>Remove</button></div>
          ${field(`${p}.objectName`, "Object name", { required: true, hint: "an object of the eRX object configuration, e.g. AdverseEvent" })}
          ${records.map((r, j) => {
            const rp = `${p}.records[${j}]`;
            const fields = Object.entries(r.additionalFields || {});
            return html`<div class="repeat" key=${rp}>
              <div class="repeat-head"><strong>Record ${j + 1}</strong><button type="button" class="small" onClick=${() => remove(rp)}>Remove</button></div>
              ${field(`${rp}.recordType`, "Record type", { required: true })}
              ${fields.map(([name]) => field(`${rp}.additionalFields.${name}`, name))}
              <${AddField} onAdd=${(name) => setDoc((d) => setPath(d, `${rp}.additionalFields.${name}`, ""))} />
            </div>`;
          })}
          <button type="button" class="small add" onClick=${() => add(`${p}.records`, { recordType: "" })}>Add record</button>
        </div>`;
      })}
      <button type="button" class="small add" data-add="additionalObjects" onClick=${() => add("additionalObjects", { objectName: "", records: [] })}>Add additional object</button>
    </fieldset>`;
  }

  async function submit(ev) {
    ev.preventDefault();
    setShowAll(true);
    setBusy(true);
    const res = await api.careEnroll(doc);
    setBusy(false);
    // What was sent, so the service's errors stay with the values they were about.
    setAnswer({ ...res, sent: doc });
    // Refused: the focus goes to the first field with an error, once drawn.
    if (!res.ok) focusFirstInvalid("enroll-form");
    // Enrolled: its draft goes (one kept for its key is another enrollment, and stays).
    if (res.ok) {
      unsaved.current = doc;
      if (!kept.current) {
        await saver.current.clear();
        setNote(null);
      }
    }
  }

  async function startOver() {
    await saver.current.clear();
    kept.current = false;
    unsaved.current = EMPTY;
    setDoc(EMPTY);
    setTouched(new Set());
    setShowAll(false);
    setAnswer(null);
    setNote(null);
  }

  const body = html`
    <fieldset id="enrollment-top">
      <legend>Enrollment</legend>
      <div class="grid three">
        ${field("vendorName", "Vendor (API name)", { required: true, hint: "e.g. DemoRx" })}
        ${field("programName", "Program (API name)", { required: true, hint: "e.g. DemoCareProgram" })}
        ${field("enrollmentDate", "Enrollment date", { required: true, type: "date" })}
      </div>
    </fieldset>
    ${PARTIES.map(party)}
    ${list("consents")}${list("insurances")}${list("prescriptions")}${additional()}`;

  const shownErrors = { ...(showAll ? check.fieldErrors : {}), ...serverErrors };
  const leftover = unplacedErrors(shownErrors, rendered);
  return html`
    <div class="row"><h2>Enrollment</h2><button type="button" class="small" id="enroll-reset" onClick=${startOver}>Start over</button></div>
    <${DraftNotice} note=${note} keyNotice=${keyNotice} onDiscard=${startOver} />
    <form id="enroll-form" onSubmit=${submit} novalidate autocomplete="off">
      ${body}
      <div class="row">
        <button type="submit" id="enroll-submit" class="primary" disabled=${busy}>${busy ? "Enrolling…" : "Enroll"}</button>
        <span class="muted" id="enroll-check">${check.valid ? "No problem found so far (references are checked on submission)." : `${check.errors ? check.errors.length : 0} problem(s) to fix`}</span>
      </div>
    </form>
    <div id="enroll-result" class="result" aria-live="polite">
      ${answer && answer.ok ? html`<div class="screen" role="status"><h3 class="ok">Enrolled</h3>
          <p>Care plan <code>${answer.value.carePlanExternalId}</code> · request <code>${answer.value.requestId}</code></p>
          <table><tr><th>record</th><th>path</th><th>external id</th><th>result</th></tr>
          ${answer.value.records.map((r) => html`<tr><td>${r.object}</td><td><code>${r.path}</code></td><td><code>${r.externalId}</code></td><td class="result-${r.result}">${r.result}</td></tr>`)}</table></div>`
        : null}
      ${answer && !answer.ok ? html`<div class="screen bad" role="alert" data-kind=${answer.kind}><h3>Not enrolled</h3><p>${answer.error}</p></div>` : null}
      ${leftover.length ? html`<ul class="error" id="enroll-other-errors">${leftover.map((e) => html`<li><code>${e.path || "document"}</code> ${e.message}</li>`)}</ul>` : null}
    </div>`;
}

function AddField({ onAdd }) {
  const [name, setName] = useState("");
  return html`<div class="inline">
    <${Input} label="Field name" name="new-additional-field" value=${name} onValue=${setName} />
    <button type="button" class="small" onClick=${() => name.trim() && (onAdd(name.trim()), setName(""))}>Add field</button>
  </div>`;
}

export function mount(root, { api }) {
  render(html`<${Enroll} api=${api} />`, root);
}
