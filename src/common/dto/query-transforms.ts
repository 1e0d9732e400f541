import { TransformFnParams } from 'class-transformer';

/**
 * Query values arrive as strings. Only plain digit strings become numbers; anything else ("", "1.5", "abc")
 * stays as it is and fails @IsInt with a message naming the field, where Number() would turn "" into 0.
 */
export function wholeNumber({ value }: TransformFnParams): unknown {
  return typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
}
