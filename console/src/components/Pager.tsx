/** Previous and next page of a paged list, hidden when it has one page. */
export function Pager({
  page,
  totalPages,
  onPage,
  label = 'Pages',
  previous = 'Previous page',
  next = 'Next page',
}: {
  page: number;
  totalPages: number;
  onPage: (page: number) => void;
  label?: string;
  previous?: string;
  next?: string;
}) {
  if (totalPages <= 1) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {previous}
      </button>
      <span>
        Page {page} of {totalPages}
      </span>
      <button type="button" disabled={page >= totalPages} onClick={() => onPage(page + 1)}>
        {next}
      </button>
    </nav>
  );
}
