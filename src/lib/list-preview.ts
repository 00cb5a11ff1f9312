/** The list operation's query that reads only the first `count` records (x-ui.list.preview). */
export function previewQuery(count: number): { limit: number } {
  return { limit: count };
}
