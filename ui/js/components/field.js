// Labelled inputs with an error placed beside them. `TypedField` renders a field definition
// of the care services by its type (the twelve types of the missing-information service);
// the length and scale are hints only: the Rust validator decides.
import { html } from "../../vendor/preact-htm.js";

/** The error messages under a field (nothing when there are none). */
export function FieldErrors({ id, messages }) {
  if (!messages || !messages.length) return null;
  return html`<span class="field-error" id=${id} role="alert">${messages.join("; ")}</span>`;
}

let seq = 0;
const nextId = () => `f${++seq}`;

/**
 * A labelled text-like input. `name` doubles as the error path; `errors` are its messages.
 * `onValue` receives the raw string (or boolean for checkboxes).
 */
export function Input({ label, name, value, type = "text", errors, onValue, hint, wide, required, options, placeholder, step, autocomplete = "off", onBlur }) {
  const id = `in-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const errId = `${id}-err`;
  const invalid = errors && errors.length > 0;
  const common = {
    id,
    name,
    "aria-invalid": invalid ? "true" : "false",
    "aria-describedby": invalid ? errId : undefined,
    onBlur,
  };
  if (type === "checkbox") {
    return html`<div class=${"field check" + (invalid ? " invalid" : "")} data-path=${name}>
      <label for=${id}><input ...${common} type="checkbox" checked=${Boolean(value)} onChange=${(e) => onValue(e.currentTarget.checked)} /> ${label}</label>
      <${FieldErrors} id=${errId} messages=${errors} />
    </div>`;
  }
  let control;
  const onInput = (e) => onValue(e.currentTarget.value);
  if (type === "select") {
    control = html`<select ...${common} value=${value ?? ""} onChange=${onInput}>
      <option value="">—</option>
      ${(options || []).map((o) => html`<option value=${o}>${o}</option>`)}
    </select>`;
  } else if (type === "textarea") {
    control = html`<textarea ...${common} rows="4" value=${value ?? ""} onInput=${onInput}></textarea>`;
  } else {
    control = html`<input ...${common} type=${type} value=${value ?? ""} onInput=${onInput} placeholder=${placeholder} step=${step} autocomplete=${autocomplete} />`;
  }
  return html`<div class=${"field" + (wide ? " wide" : "") + (invalid ? " invalid" : "")} data-path=${name}>
    <label for=${id}>${label}${required ? html`<span class="req" aria-hidden="true"> *</span>` : null}</label>
    ${control}
    ${hint ? html`<small>${hint}</small>` : null}
    <${FieldErrors} id=${errId} messages=${errors} />
  </div>`;
}

/** How a care field type is entered: input type, step and a hint from length/scale. */
export function inputFor(def) {
  const len = def.length ?? null;
  const scale = def.scale ?? null;
  switch (def.type) {
    case "DATE":
      return { type: "date" };
    case "DATETIME":
      return { type: "datetime-local", hint: "date and time" };
    case "BOOLEAN":
      return { type: "checkbox" };
    case "INTEGER":
      return { type: "number", step: "1", hint: len ? `whole number, up to ${len} digits` : "whole number" };
    case "DOUBLE":
    case "CURRENCY":
    case "PERCENT": {
      const step = scale ? String(10 ** -scale) : "1";
      const parts = [];
      if (len !== null) parts.push(`up to ${len} digits before the point`);
      if (scale !== null) parts.push(`${scale} after`);
      return { type: "number", step, hint: parts.join(", ") || null };
    }
    case "EMAIL":
      return { type: "email", hint: len ? `at most ${len} characters` : null };
    case "PHONE":
      return { type: "tel", hint: len ? `at most ${len} characters` : null };
    case "PICKLIST":
      return Array.isArray(def.picklistValues) && def.picklistValues.length
        ? { type: "select", options: def.picklistValues }
        : { type: "text", hint: "one of the request's values" };
    case "TEXTAREA":
      return { type: "textarea", hint: len ? `at most ${len} characters` : null };
    default:
      return { type: "text", hint: len ? `at most ${len} characters` : null };
  }
}

/**
 * One field definition `{uuid, type, length, scale, label, picklistValues?}` rendered by
 * type. Values are the strings the service expects (`"true"`/`"false"` for BOOLEAN).
 */
export function TypedField({ def, value, errors, onValue }) {
  const how = inputFor(def);
  if (how.type === "checkbox") {
    return html`<${Input} label=${def.label} name=${def.uuid} type="checkbox" value=${value === "true"} errors=${errors}
      onValue=${(v) => onValue(v ? "true" : "false")} />`;
  }
  return html`<${Input} label=${def.label} name=${def.uuid} type=${how.type} value=${value} errors=${errors} hint=${how.hint}
    options=${how.options} step=${how.step} onValue=${onValue} />`;
}

export { nextId };

/**
 * Moves the keyboard focus to the first field marked invalid in the form `formId` (after a
 * refused submission), so a keyboard or screen-reader user lands on what needs correcting and
 * its message (aria-describedby) is read. It waits for the refusal to be drawn: Preact renders
 * the state just set on a microtask, before this timer runs.
 */
export function focusFirstInvalid(formId) {
  setTimeout(() => {
    const form = document.getElementById(formId);
    const first = form && form.querySelector(".field.invalid input, .field.invalid select, .field.invalid textarea, [aria-invalid=true]");
    if (first) first.focus();
  }, 0);
}
