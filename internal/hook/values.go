package hook

// MergeValues merges the values a hook returned (Result.Values), src, over
// the release values dst: maps merge key by key, anything else replaces. The
// reconciler and `rudder diff` merge each hook's values so.
func MergeValues(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				MergeValues(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
