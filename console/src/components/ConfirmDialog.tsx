import { type ReactNode, useEffect, useId, useRef } from 'react';

/** A modal question (the browser's <dialog>: focus moves into it, Escape cancels). */
export function ConfirmDialog({
  open,
  title,
  children,
  confirm,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirm: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);
  return (
    <dialog ref={dialog} aria-labelledby={titleId} onCancel={onCancel} onClose={() => open && onCancel()}>
      <h2 id={titleId}>{title}</h2>
      {children}
      <div className="actions">
        <button type="button" className="danger" onClick={onConfirm}>
          {confirm}
        </button>
        <button type="button" autoFocus onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
