// A scrollable region must be reachable by keyboard (axe: scrollable-region-focusable), so it
// takes a tab stop even though it is not a control.
export const scrollRegion = { tabIndex: 0 } as const;
