import { ValueTransformer } from 'typeorm';

/** pg returns bigint as a string; byte counts in this service stay below 2^53, so a number is exact. */
export const bigintTransformer: ValueTransformer = {
  to: (value?: number | null) => value,
  from: (value?: string | null) => (value === null || value === undefined ? value : Number(value)),
};
