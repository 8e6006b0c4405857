// Small hooks shared by the Preact views.
import { useEffect, useRef } from "../../vendor/preact-htm.js";

/**
 * A ref that is true while the component is mounted: an answer that arrives after the user
 * moved on (another app, another view) is dropped instead of shown where it no longer belongs.
 */
export function useAlive() {
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);
  return alive;
}
