package release

import (
	"errors"
	"fmt"
	"math"
	"strings"

	cvss30 "github.com/pandatix/go-cvss/30"
	cvss31 "github.com/pandatix/go-cvss/31"
	cvss40 "github.com/pandatix/go-cvss/40"
)

// CVSSBaseScore is the base score of a CVSS v3.0, v3.1 or v4.0 vector
// ("CVSS:3.1/AV:N/…"), as FIRST's calculators give it. Other versions (CVSS
// v2 has no "CVSS:" prefix) and malformed vectors are an error. A v4.0
// vector may carry threat or environmental metrics; the score is of its
// base metrics alone (CVSS-B), so that it means the same for every vector.
func CVSSBaseScore(vector string) (float64, error) {
	switch {
	case strings.HasPrefix(vector, "CVSS:3.0/"):
		v, err := cvss30.ParseVector(vector)
		if err != nil {
			return 0, fmt.Errorf("not a valid CVSS v3.0 vector (%v)", err)
		}
		return v.BaseScore(), nil
	case strings.HasPrefix(vector, "CVSS:3.1/"):
		v, err := cvss31.ParseVector(vector)
		if err != nil {
			return 0, fmt.Errorf("not a valid CVSS v3.1 vector (%v)", err)
		}
		return v.BaseScore(), nil
	case strings.HasPrefix(vector, "CVSS:4.0/"):
		v, err := cvss40.ParseVector(vector)
		if err != nil {
			return 0, fmt.Errorf("not a valid CVSS v4.0 vector (%v)", err)
		}
		base := []string{"AV", "AC", "AT", "PR", "UI", "VC", "VI", "VA", "SC", "SI", "SA"}
		parts := []string{"CVSS:4.0"}
		for _, m := range base {
			val, err := v.Get(m)
			if err != nil {
				return 0, fmt.Errorf("not a valid CVSS v4.0 vector (%v)", err)
			}
			parts = append(parts, m+":"+val)
		}
		b, err := cvss40.ParseVector(strings.Join(parts, "/"))
		if err != nil {
			return 0, fmt.Errorf("not a valid CVSS v4.0 vector (%v)", err)
		}
		// Score rounds to one decimal; keep it exact for display.
		return math.Round(b.Score()*10) / 10, nil
	}
	return 0, errors.New("not a CVSS v3.0, v3.1 or v4.0 vector (it must start with CVSS:3.0/, CVSS:3.1/ or CVSS:4.0/)")
}

// CVSSRating is the qualitative rating of a CVSS base score, the same
// scale for v3.x and v4.0: none (0.0), low (0.1-3.9), medium (4.0-6.9),
// high (7.0-8.9), critical (9.0-10.0).
func CVSSRating(score float64) string {
	switch {
	case score >= 9.0:
		return "critical"
	case score >= 7.0:
		return "high"
	case score >= 4.0:
		return "medium"
	case score > 0:
		return "low"
	}
	return "none"
}

// SeverityOfScore is the severity word a score gives; a score of 0.0
// ("none") gives no severity.
func SeverityOfScore(score float64) string {
	if r := CVSSRating(score); r != "none" {
		return r
	}
	return ""
}
