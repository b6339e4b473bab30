import { HetznerError, notFound } from './errors.js';
import { parseLabelSelector } from './label-selector.js';
import { paginate } from './pagination.js';
import { imageJson } from './render.js';
import { idParam, type Route, type RouteContext } from './router.js';
import type { ImageRecord } from './state.js';

function findImage(context: RouteContext): ImageRecord {
  const image = context.store.images.get(idParam(context, 'image'));
  if (!image) throw notFound('image');
  return image;
}

function listImages(context: RouteContext) {
  const { query } = context;
  const selector = query.get('label_selector');
  const matches = selector ? parseLabelSelector(selector) : () => true;
  const name = query.get('name');
  const types = query.getAll('type');
  const statuses = query.getAll('status');
  const architecture = query.get('architecture');
  const images = [...context.store.images.values()]
    .filter(
      (image) =>
        matches(image.labels) &&
        (name === null || image.name === name) &&
        (types.length === 0 || types.includes(image.type)) &&
        (statuses.length === 0 || statuses.includes(image.status)) &&
        (architecture === null || architecture === 'x86'),
    )
    .sort((a, b) => a.id - b.id);
  const page = paginate(images, query);
  return {
    status: 200,
    body: { images: page.items.map(imageJson), meta: { pagination: page.meta } },
  };
}

function deleteImage(context: RouteContext) {
  const image = findImage(context);
  // Only a project's own images can go; system images belong to Hetzner.
  if (image.type === 'system')
    throw new HetznerError(422, 'unsupported_error', 'system images cannot be deleted');
  if (image.status === 'creating')
    throw new HetznerError(423, 'locked', 'image is locked: it is still being created');
  context.store.images.delete(image.id);
  return { status: 204 };
}

export const imageRoutes: Route[] = [
  { method: 'GET', template: '/images', handle: listImages },
  {
    method: 'GET',
    template: '/images/{id}',
    handle: (context) => ({ status: 200, body: { image: imageJson(findImage(context)) } }),
  },
  { method: 'DELETE', template: '/images/{id}', handle: deleteImage },
];
