-- Verify scirag:functions/preset_resolve
DO $$
BEGIN
  ASSERT (SELECT NOT prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.preset_resolve(text)'::regprocedure),
         'scirag.preset_resolve(text): SECURITY INVOKER, pinned search_path';
  ASSERT NOT has_function_privilege('public', 'scirag.preset_resolve(text)', 'EXECUTE'),
         'scirag.preset_resolve(text): PUBLIC may execute it';
  ASSERT (scirag.preset_resolve('default')->'retrieve'->>'preset') = 'default',
         'scirag.preset_resolve(text): the retrieve options name the preset';
  ASSERT (scirag.preset_resolve('default')->'answer'->>'max_sources')::int
         = (scirag.preset_get('default') #>> '{augmentation,top_n_contexts}')::int,
         'scirag.preset_resolve(text): max_sources is augmentation.top_n_contexts';
END $$;
