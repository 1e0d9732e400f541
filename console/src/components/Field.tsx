import { type ReactNode, useId } from 'react';

/**
 * A labelled control with its help and its error beside it: the error is announced (role="alert") and tied to the
 * control (aria-describedby), so a screen reader reads it with the field.
 */
export function Field({
  label,
  error,
  help,
  children,
}: {
  label: string;
  error?: string | null;
  help?: string;
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ReactNode;
}) {
  const id = useId();
  const helpId = `${id}-help`;
  const errorId = `${id}-error`;
  const describedBy = [help ? helpId : undefined, error ? errorId : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined })}
      {help && (
        <p className="help" id={helpId}>
          {help}
        </p>
      )}
      {error && (
        <p className="error" id={errorId} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** A problem that belongs to no one field (a refused save, a 429), shown above the form's buttons. */
export function FormError({ message }: { message?: string | null }) {
  return message ? (
    <p className="error form-error" role="alert">
      {message}
    </p>
  ) : null;
}
