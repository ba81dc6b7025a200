// Times in markup: the datetime attribute of a <time> element. Their
// words are readmodel's (TimeText, AgoText, SpanText, RunText).

package views

import "time"

// isoTime is the datetime attribute of a <time> element.
func isoTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}
