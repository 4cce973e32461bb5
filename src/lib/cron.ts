/**
 * croner options shared by every scheduled job: patterns read in UTC, and no second run while one
 * is still going. UTC as `utcOffset: 0` rather than `timezone: "UTC"`: croner's time-zone path
 * formats dates through Intl, whose first use loads its data: 8-9 ms of every start and 5 MB of
 * idle memory (issue 19, docs/performance.md). The schedules are the same.
 */
export const UTC_NO_OVERLAP = { protect: true, utcOffset: 0 } as const;
