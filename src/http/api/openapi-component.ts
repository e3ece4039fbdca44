/**
 * The marker that puts a piece of the OpenAPI document once under
 * `#/components` (docs/openapi-transform.ts hoists it). A module of its own, so
 * that the component catalog (api-components.ts) and the subset parameters
 * (subset-docs.ts), which import each other's neighbours, share it without a cycle.
 */
export const COMPONENT = 'x-mirador-component';

export type Section = 'headers' | 'parameters' | 'responses' | 'examples';

/** `value`, marked to live once at `#/components/<section>/<name>`. */
export function component<T extends object>(section: Section, name: string, value: T): T {
  return { [COMPONENT]: `${section}/${name}`, ...value };
}
