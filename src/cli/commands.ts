import { ClassConstructor, plainToInstance } from 'class-transformer';
import { isUUID, validate } from 'class-validator';
import { describeValidationErrors } from '../common/validation';
import {
  CreateApiKeyDto,
  CreateOrganizationDto,
  CreateSubscriptionDto,
  ListOrganizationsQueryDto,
  UpdateOrganizationDto,
} from '../organizations/dto/organization.dto';
import { firstAdminRefusalOf } from '../organizations/organizations.errors';
import type { OrganizationsService } from '../organizations/organizations.service';
import { AddMemberDto, CreateUserDto, ListUsersQueryDto, UpdateMemberDto, VerifyUserDto } from '../people/dto/people.dto';
import type { PeopleService } from '../people/people.service';
import { CliError } from './cli-error';

/**
 * The admin CLI's commands. Each does exactly what its admin API call does, through the same OrganizationsService or
 * PeopleService and the same DTO validation rules. Passwords come from the environment (PASSWORD_VARIABLE), never
 * from a flag: a command line is visible to every user of the machine and kept in shell histories.
 */

export type FlagName =
  | 'name'
  | 'bytes'
  | 'org'
  | 'key'
  | 'permissions'
  | 'plan'
  | 'subscription'
  | 'search'
  | 'page'
  | 'limit'
  | 'email'
  | 'user'
  | 'role'
  | 'admin-email'
  | 'admin-name'
  | 'allowance';
export type Flags = Partial<Record<FlagName, string>>;

/** The services a command calls. */
export interface CliServices {
  organizations: OrganizationsService;
  people: PeopleService;
}

/** Where create-user and create-org read a password from. */
export const PASSWORD_VARIABLE = 'FLAGSTORE_PASSWORD';

export interface CommandSpec {
  summary: string;
  /** Flags the command requires. */
  flags: FlagName[];
  /** Flags it also takes, each optional as the query parameter it stands for. */
  optionalFlags?: FlagName[];
  /**
   * Validates the flags (before any database is opened) and returns the call to make; null for `migrate`.
   * `flags` holds every required flag, `optional` the optional ones given.
   */
  prepare(
    flags: Required<Flags>,
    optional: Flags,
    env: Record<string, string | undefined>,
  ): Promise<(services: CliServices) => Promise<unknown>> | null;
}

/** Which flag a DTO property comes from, so that a validation message names both. */
const FLAG_OF_PROPERTY: Record<string, FlagName> = {
  name: 'name',
  storageAllocation: 'bytes',
  flagAllowance: 'allowance',
  permissions: 'permissions',
  plan: 'plan',
  search: 'search',
  page: 'page',
  limit: 'limit',
  email: 'email',
  userId: 'user',
  role: 'role',
};

export const COMMANDS: Record<string, CommandSpec> = {
  'create-org': {
    summary:
      'Create an organization; with --admin-email its first admin: an existing user (email alone), or a new one with --admin-name ' +
      `and a password in $${PASSWORD_VARIABLE} (POST /v1/admin/organizations)`,
    flags: ['name'],
    optionalFlags: ['admin-email', 'admin-name'],
    prepare: async (flags, optional, env) => {
      if (optional['admin-name'] !== undefined && optional['admin-email'] === undefined) {
        throw new CliError('USAGE_ERROR', '--admin-name needs --admin-email (the first admin is found or created by email)');
      }
      // As in the admin API: whether the email is a user's is known only in the database, which then refuses a password sent
      // for an existing user and asks a new one for theirs (in the CLI's terms: firstAdminUsageError).
      const given = env[PASSWORD_VARIABLE];
      const admin =
        optional['admin-email'] === undefined
          ? undefined
          : {
              email: optional['admin-email'],
              ...(optional['admin-name'] !== undefined && { name: optional['admin-name'] }),
              ...(given !== undefined && { password: given }),
            };
      const dto = await validated(CreateOrganizationDto, { name: flags.name, ...(admin && { admin }) });
      return ({ organizations }) => organizations.createOrganization(dto).catch((error: unknown) => Promise.reject(firstAdminUsageError(error)));
    },
  },
  'create-user': {
    summary: `Create a user; with $${PASSWORD_VARIABLE} set, they sign in with that password (POST /v1/admin/users)`,
    flags: ['email', 'name'],
    prepare: async (flags, _optional, env) => {
      const given = env[PASSWORD_VARIABLE];
      const dto = await validated(CreateUserDto, { email: flags.email, name: flags.name, ...(given !== undefined && { password: given }) });
      return ({ people }) => people.createUser(dto);
    },
  },
  'verify-user': {
    summary:
      "Mark a user's email as verified: you vouch that the person reads it (as for a user you create). Single sign-on then signs " +
      'into the account without taking it over (no admin API call: the operator only)',
    flags: ['email'],
    prepare: async (flags) => {
      const dto = await validated(VerifyUserDto, { email: flags.email });
      return ({ people }) => people.verifyUser(dto.email);
    },
  },
  'list-users': {
    summary: 'List users, newest first (GET /v1/admin/users)',
    flags: [],
    optionalFlags: ['search', 'page', 'limit'],
    prepare: async (_flags, optional) => {
      const given = Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined));
      const query = await validated(ListUsersQueryDto, given);
      return ({ people }) => people.listUsers(query);
    },
  },
  'delete-user': {
    summary: 'Delete a user: their sessions and memberships end (DELETE /v1/admin/users/{userId})',
    flags: ['user'],
    prepare: async (flags) => {
      const user = uuid('user', flags.user);
      return async ({ people }) => {
        await people.deleteUser(user);
        return { deleted: user };
      };
    },
  },
  'add-member': {
    summary: 'Make a user a member of an organization (POST /v1/admin/organizations/{orgId}/members)',
    flags: ['org', 'user', 'role'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const dto = await validated(AddMemberDto, { userId: flags.user, role: flags.role });
      return ({ people }) => people.addMember(org, dto);
    },
  },
  'set-role': {
    summary: "Change a member's role (PATCH /v1/admin/organizations/{orgId}/members/{userId})",
    flags: ['org', 'user', 'role'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const user = uuid('user', flags.user);
      const dto = await validated(UpdateMemberDto, { role: flags.role });
      return ({ people }) => people.setRole(org, user, dto.role);
    },
  },
  'remove-member': {
    summary: 'Remove a member from an organization (DELETE /v1/admin/organizations/{orgId}/members/{userId})',
    flags: ['org', 'user'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const user = uuid('user', flags.user);
      return async ({ people }) => {
        await people.removeMember(org, user);
        return { removed: user, organization: org };
      };
    },
  },
  'list-orgs': {
    summary: 'List organizations, newest first, a page at a time (GET /v1/admin/organizations)',
    flags: [],
    optionalFlags: ['search', 'page', 'limit'],
    prepare: async (_flags, optional) => {
      // Only what was given, so that the DTO's defaults (page 1, 20 per page) apply to the rest, as for a query string.
      const given = Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined));
      const query = await validated(ListOrganizationsQueryDto, given);
      return ({ organizations }) => organizations.listOrganizations(query);
    },
  },
  'show-org': {
    summary: 'Show an organization with its API keys (never the keys themselves) and subscriptions (GET /v1/admin/organizations/{orgId})',
    flags: ['org'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      return ({ organizations }) => organizations.getOrganization(org);
    },
  },
  'set-allocation': {
    summary: "Set an organization's storage allocation in bytes (PATCH /v1/admin/organizations/{orgId})",
    flags: ['org', 'bytes'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const dto = await validated(UpdateOrganizationDto, { storageAllocation: integerArgument('bytes', 'storageAllocation', flags.bytes) });
      return ({ organizations }) => organizations.updateOrganization(org, dto);
    },
  },
  'set-allowance': {
    summary:
      "Give an organization its own flag allowance (1-10000), or `level` for its level's by subscription " +
      '(FLAGS_ALLOWED_FREE / FLAGS_ALLOWED_SUBSCRIBED) (PATCH /v1/admin/organizations/{orgId} {flagAllowance})',
    flags: ['org', 'allowance'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const raw = flags.allowance.trim().toLowerCase();
      const flagAllowance = raw === 'level' || raw === 'null' ? null : integerArgument('allowance', 'flagAllowance', raw);
      const dto = await validated(UpdateOrganizationDto, { flagAllowance });
      return ({ organizations }) => organizations.updateOrganization(org, dto);
    },
  },
  'create-key': {
    summary: 'Issue an API key; the key is printed once (POST /v1/admin/organizations/{orgId}/api-keys)',
    flags: ['org', 'name', 'permissions'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const permissions = flags.permissions.trim() === '' ? [] : flags.permissions.split(',').map((p) => p.trim());
      const dto = await validated(CreateApiKeyDto, { name: flags.name, permissions });
      return ({ organizations }) => organizations.createApiKey(org, dto);
    },
  },
  'revoke-key': {
    summary: 'Revoke an API key (DELETE /v1/admin/organizations/{orgId}/api-keys/{keyId})',
    flags: ['org', 'key'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const key = uuid('key', flags.key);
      return async ({ organizations }) => {
        await organizations.revokeApiKey(org, key);
        return { revoked: key };
      };
    },
  },
  subscribe: {
    summary: 'Add an active subscription (POST /v1/admin/organizations/{orgId}/subscriptions)',
    flags: ['org', 'plan'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const dto = await validated(CreateSubscriptionDto, { plan: flags.plan });
      return ({ organizations }) => organizations.createSubscription(org, dto);
    },
  },
  unsubscribe: {
    summary: 'Cancel a subscription (DELETE /v1/admin/organizations/{orgId}/subscriptions/{subscriptionId})',
    flags: ['org', 'subscription'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const subscription = uuid('subscription', flags.subscription);
      return async ({ organizations }) => {
        await organizations.cancelSubscription(org, subscription);
        return { cancelled: subscription };
      };
    },
  },
  migrate: {
    summary: 'Apply pending database migrations',
    flags: [],
    prepare: () => null,
  },
};

/** The command of that name, if there is one (never an Object.prototype member). */
export function commandNamed(name: string): CommandSpec | undefined {
  return Object.prototype.hasOwnProperty.call(COMMANDS, name) ? COMMANDS[name] : undefined;
}

/** The DTO the admin API would receive, validated with the same options as its ValidationPipe. */
async function validated<T extends object>(type: ClassConstructor<T>, plain: Record<string, unknown>): Promise<T> {
  const dto = plainToInstance(type, plain);
  const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) {
    const flag = FLAG_OF_PROPERTY[errors[0].property];
    throw new CliError('VALIDATION_ERROR', `${describeValidationErrors(errors)}${flag ? ` (--${flag})` : ''}`);
  }
  return dto;
}

/** The admin API's refusal of the first admin's fields, said with the flag or variable the operator gives them with. */
function firstAdminUsageError(error: unknown): unknown {
  const refusal = firstAdminRefusalOf(error);
  if (refusal === undefined) return error;
  if (refusal.field === 'admin.name')
    return new CliError('USAGE_ERROR', 'No user has this email yet: give the new first admin a name with --admin-name');
  return refusal.userExists
    ? new CliError('USAGE_ERROR', `A user has this email and keeps their own password: unset ${PASSWORD_VARIABLE}`)
    : new CliError('USAGE_ERROR', `No user has this email yet: set ${PASSWORD_VARIABLE} to the new first admin's password (12-256 characters)`);
}

function uuid(flag: FlagName, value: string): string {
  if (!isUUID(value)) throw new CliError('VALIDATION_ERROR', `--${flag} must be a valid UUID`);
  return value;
}

/** JSON would carry a number; a command line carries text, which must be a plain integer to become one. */
function integerArgument(flag: FlagName, property: string, raw: string): number {
  const text = raw.trim();
  // Decimals go on to the DTO, whose @IsInt names the rule; text that is no number at all stops here.
  if (!/^-?\d+(\.\d+)?$/.test(text)) throw new CliError('VALIDATION_ERROR', `${property} must be an integer number (--${flag})`);
  return Number(text);
}
