/**
 * refine data provider over the generated operations: getList -> `<resource>.list`,
 * getOne -> `<resource>.show` (without an id for a singleton), create/update/deleteOne -> `.create`/`.update`/`.delete`, custom ->
 * `meta.operation` (any operation key). Path parameters come from the id and `meta.params`.
 * List endpoints answer arrays (or an object holding the array under the resource's `listKey`);
 * filters, sorters and pagination are applied client-side.
 */
import type { BaseRecord, DataProvider } from '@refinedev/core';
import { operations } from '@/generated/api';
import { resources } from '@/generated/resources';
import { applyFilters, applyPagination, applySorters } from './list-utils';
import { requestOperation, ApiError, type RequestOptions } from './http-client';
import type { PortalLiveProvider } from './live-provider';

export type RequestFn = (key: string, options?: RequestOptions) => Promise<unknown>;

function listKeyOf(resource: string): string | null {
  const found = resources.find((r) => r.name === resource);
  return (found?.meta.listKey as string | null | undefined) ?? null;
}

function opKey(resource: string, name: string): string {
  const key = `${resource}.${name}`;
  if (!(key in operations)) {
    throw new ApiError({
      message: `Operation ${key} does not exist`,
      statusCode: 0,
      error: 'unknown_operation',
    });
  }
  return key;
}

function paramsFrom(
  meta: Record<string, unknown> | undefined,
  id?: string | number,
): Record<string, string | number> {
  const extra = (meta?.params ?? {}) as Record<string, string | number>;
  return id === undefined ? { ...extra } : { id, ...extra };
}

/**
 * Creates the data provider around an HTTP request function (injectable for tests). With the live
 * provider, a list answer gets the live events that arrived while it was read.
 */
export function createDataProvider(
  request: RequestFn = requestOperation,
  live?: Pick<PortalLiveProvider, 'beginListRead'> &
    Partial<Pick<PortalLiveProvider, 'beginOneRead'>>,
): DataProvider {
  return {
    getApiUrl: () => '/api/v3',

    getList: async ({ resource, filters, sorters, pagination, meta }) => {
      // The resource's own list, unparameterised, holds every record of the resource it reaches;
      // another operation's list (a tab) or a parameterised one holds only some of them.
      const whole = !meta?.operation && !meta?.query && !meta?.params;
      const read = live?.beginListRead(resource, whole);
      let answer: unknown;
      try {
        answer = await request(opKey(resource, (meta?.operation as string | undefined) ?? 'list'), {
          params: paramsFrom(meta),
          ...(meta?.query ? { query: meta.query as RequestOptions['query'] } : {}),
        });
      } catch (error) {
        read?.cancel();
        throw error;
      }
      const key = listKeyOf(resource);
      let records: BaseRecord[] = [];
      if (Array.isArray(answer)) records = answer as BaseRecord[];
      else if (
        answer &&
        typeof answer === 'object' &&
        key &&
        Array.isArray((answer as Record<string, unknown>)[key])
      ) {
        records = (answer as Record<string, BaseRecord[]>)[key] ?? [];
      }
      if (read) records = read.settle(records) as BaseRecord[];
      const filtered = applySorters(applyFilters(records, filters), sorters);
      return { data: applyPagination(filtered, pagination) as never[], total: filtered.length };
    },

    getOne: async ({ resource, id, meta }) => {
      // A singleton (the profile) is read without an id: the id only keys its cache.
      const singleton = resources.find((r) => r.name === resource)?.meta.singleton === true;
      // The live events of the records the answer embeds, while it is read (a deployment's desktops).
      const read = live?.beginOneRead?.(resource, id);
      let data: unknown;
      try {
        data = await request(opKey(resource, (meta?.operation as string | undefined) ?? 'show'), {
          params: paramsFrom(meta, singleton ? undefined : id),
        });
      } catch (error) {
        read?.cancel();
        throw error;
      }
      return { data: (read ? read.settle(data) : data) as never };
    },

    create: async ({ resource, variables, meta }) => {
      const data = await request(
        opKey(resource, (meta?.operation as string | undefined) ?? 'create'),
        {
          params: paramsFrom(meta),
          body: variables,
        },
      );
      return { data: (data ?? {}) as never };
    },

    update: async ({ resource, id, variables, meta }) => {
      const data = await request(
        opKey(resource, (meta?.operation as string | undefined) ?? 'update'),
        {
          params: paramsFrom(meta, id),
          body: variables,
        },
      );
      return { data: (data ?? { id }) as never };
    },

    deleteOne: async ({ resource, id, meta }) => {
      const data = await request(
        opKey(resource, (meta?.operation as string | undefined) ?? 'delete'),
        {
          params: paramsFrom(meta, id),
        },
      );
      return { data: (data ?? { id }) as never };
    },

    custom: async ({ meta, payload, query }) => {
      const key = meta?.operation as string | undefined;
      if (!key || !(key in operations)) {
        throw new ApiError({
          message: `Unknown operation ${String(key)}`,
          statusCode: 0,
          error: 'unknown_operation',
        });
      }
      const data = await request(key, {
        params: paramsFrom(meta),
        ...(query ? { query: query as RequestOptions['query'] } : {}),
        ...(payload !== undefined ? { body: payload } : {}),
      });
      return { data: (data ?? {}) as never };
    },
  };
}
