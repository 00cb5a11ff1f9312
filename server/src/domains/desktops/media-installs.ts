/** Installation profiles a desktop from media may name (`xml_id`), as GET /media/installs lists them. */
export const MEDIA_INSTALLS: readonly {
  id: string;
  name: string;
  description: string;
  vers: string;
}[] = [{ id: 'generic', name: 'Generic x86-64', description: 'Any operating system', vers: '' }];
