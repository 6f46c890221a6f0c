// The unsaved-changes guard: a screen with a form says how to tell whether it holds changes not saved yet, and
// leaving it (another screen, a reload, closing the tab) asks first. One screen at a time, so one guard.

let unsaved: (() => boolean) | undefined;

/** From now until the next screen: ask before leaving while `dirty()` says there are unsaved changes. */
export function guardUnsaved(dirty: () => boolean): void {
  unsaved = dirty;
}

/** The changes are saved (or the screen is gone): leave freely. */
export function releaseGuard(): void {
  unsaved = undefined;
}

/** Whether the user may leave the screen: nothing unsaved, or they said so. */
export function mayLeave(): boolean {
  return !unsaved?.() || window.confirm('Leave this page? Your changes are not saved.');
}

// A reload or closing the tab: the browser asks in its own words.
window.addEventListener('beforeunload', (event) => {
  if (unsaved?.()) event.preventDefault();
});
