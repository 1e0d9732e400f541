import { FeatureFlagQuotaDto } from './quota.dto';

/** An organization without a subscription, using 2 of its 5 flags (the OpenAPI test holds it to the schema). */
export const QUOTA_EXAMPLE: FeatureFlagQuotaDto = { max: 5, used: 2, subscribed: false, locked: 0 };
