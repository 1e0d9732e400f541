import { describeRule, draftOf, draftsOf, followStoredRules, ruleIndexOf, ruleOf, rulesChange } from './rules';

describe("the console's rule drafts", () => {
  const rule = {
    id: 'eu-canary',
    conditions: [
      { attribute: 'region', operator: 'in' as const, values: ['eu-west', 'eu-central'] },
      { attribute: 'serverId', operator: 'percentage' as const, values: [0, 10] },
      { attribute: 'build', operator: 'semverGte' as const, values: ['1.4'] },
      { attribute: 'level', operator: 'gte' as const, values: [10] },
    ],
    value: true,
  };

  it('round-trips a rule through the form', () => {
    expect(ruleOf(draftOf(rule))).toEqual(rule);
  });

  it('reads what a person types: lists split on commas, numbers as numbers, spaces trimmed', () => {
    const draft = draftOf(rule);
    draft.conditions[0].text = ' eu-west ,, eu-north ';
    draft.conditions[1].from = '10';
    draft.conditions[1].to = ' 50 ';
    draft.conditions[3].text = '2.5';
    expect(ruleOf(draft).conditions.map((condition) => condition.values)).toEqual([['eu-west', 'eu-north'], [10, 50], ['1.4'], [2.5]]);
  });

  it('leaves text that is not a number as text, for the service to refuse by name', () => {
    const draft = draftOf(rule);
    draft.conditions[3].text = 'ten';
    expect(ruleOf(draft).conditions[3].values).toEqual(['ten']);
  });

  it('finds the rule and condition an API message is about', () => {
    expect(ruleIndexOf('rules[1].conditions[0].values must hold exactly one number for gte')).toEqual({ rule: 1, condition: 0 });
    expect(ruleIndexOf('rules[2].id must be 1-64 characters')).toEqual({ rule: 2, condition: undefined });
    expect(ruleIndexOf('property rules[0].weight should not exist')).toEqual({ rule: 0, condition: undefined });
    expect(ruleIndexOf('rules must hold at most 20 rules')).toBeNull();
  });

  describe('an open editor when the stored rules change', () => {
    const canary = { ...rule, conditions: [rule.conditions[1]] };
    const wider = { ...canary, conditions: [{ ...canary.conditions[0], values: [0, 50] }] };

    it('shows the new rules when the person changed nothing', () => {
      expect(followStoredRules(draftsOf([canary]), [canary], [wider])).toEqual({ drafts: draftsOf([wider]), changedElsewhere: false });
      expect(followStoredRules(draftsOf([canary]), [canary], [])).toEqual({ drafts: [], changedElsewhere: false });
      expect(followStoredRules([], [], [canary])).toEqual({ drafts: draftsOf([canary]), changedElsewhere: false });
    });

    it("keeps the person's unsaved edits, and says the rules changed elsewhere", () => {
      const typing = draftsOf([canary]);
      typing[0].conditions[0].to = '25';
      expect(followStoredRules(typing, [canary], [wider])).toEqual({ drafts: typing, changedElsewhere: true });
      expect(followStoredRules([], [canary], [wider])).toEqual({ drafts: [], changedElsewhere: true });
    });

    it('is quiet when the drafts already are the new rules (this editor saved them, or the person typed the same)', () => {
      const typed = draftsOf([canary]);
      typed[0].conditions[0].to = '50';
      expect(followStoredRules(typed, [canary], [wider])).toEqual({ drafts: draftsOf([wider]), changedElsewhere: false });
    });
  });

  it('reads a flag without rules as no drafts', () => {
    expect(draftsOf(undefined)).toEqual([]);
    expect(draftsOf(null)).toEqual([]);
  });
});

describe('rules as the console reads them', () => {
  const europe = { id: 'europe', conditions: [{ attribute: 'region', operator: 'in' as const, values: ['eu-west', 'eu-central'] }], value: true };
  const canary = {
    id: 'canary',
    conditions: [
      { attribute: 'serverId', operator: 'percentage' as const, values: [0, 10] },
      { attribute: 'build', operator: 'semverGte' as const, values: ['1.4'] },
    ],
    value: { tier: 2 },
  };

  it('reads a rule as a sentence', () => {
    expect(describeRule(europe)).toBe('europe: region is one of eu-west, eu-central → true');
    expect(describeRule(canary)).toBe('canary: serverId falls in the rollout 0–10 % and build is version at least 1.4 → {"tier":2}');
  });

  it('tells the rules removed, added, changed and reordered', () => {
    expect(rulesChange([europe, canary], undefined)).toEqual({ removed: [europe, canary], added: [], changed: [], reordered: false });
    expect(rulesChange(undefined, [europe])).toEqual({ removed: [], added: [europe], changed: [], reordered: false });
    const wider = { ...canary, conditions: [{ ...canary.conditions[0], values: [0, 50] }, canary.conditions[1]] };
    expect(rulesChange([europe, canary], [wider, europe])).toEqual({
      removed: [],
      added: [],
      changed: [{ before: canary, after: wider }],
      reordered: true,
    });
  });
});
