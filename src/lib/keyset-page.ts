/**
 * One page of a listing read with one row more than asked (`limit + 1`): the extra row only says
 * that another page follows, whose cursor is the id of this page's last row.
 */
export function keysetPage<R extends { id: string }>(
  rows: R[],
  limit: number,
): { page: R[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  return { page, next_cursor: rows.length > limit ? page[page.length - 1]!.id : null };
}
