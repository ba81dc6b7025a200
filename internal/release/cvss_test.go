package release

import "testing"

func TestCVSSBaseScore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		vector string
		score  float64
	}{
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8},
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N", 6.1},
		{"CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:N/I:N/A:N", 0.0},
		{"CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8},
		// Temporal metrics do not change a v3 base score.
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/E:U/RL:O/RC:U", 9.8},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N", 9.3},
		{"CVSS:4.0/AV:L/AC:L/AT:N/PR:L/UI:P/VC:N/VI:H/VA:H/SC:N/SI:L/SA:L", 5.2},
		// A threat metric lowers CVSS-BT (9.1 here), not the base score.
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:H/SI:H/SA:H/E:U", 10.0},
	} {
		got, err := CVSSBaseScore(c.vector)
		if err != nil || got != c.score {
			t.Errorf("CVSSBaseScore(%q) = %v, %v; want %v", c.vector, got, err, c.score)
		}
	}
}

func TestCVSSRatingScale(t *testing.T) {
	t.Parallel()
	for score, want := range map[float64]string{0: "none", 0.1: "low", 3.9: "low", 4.0: "medium", 6.9: "medium",
		7.0: "high", 8.9: "high", 9.0: "critical", 10: "critical"} {
		if got := CVSSRating(score); got != want {
			t.Errorf("CVSSRating(%v) = %q, want %q", score, got, want)
		}
	}
}
