package logtail

// SetTrimPage makes Trim list n keys per request instead of 1,000, so that
// a test reaches its paths over several pages with a few hundred entries.
func SetTrimPage[T any](l *Log[T], n int) { l.trimPage = n }
