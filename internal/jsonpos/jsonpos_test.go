package jsonpos

import "testing"

func TestPosition(t *testing.T) {
	t.Parallel()
	body := []byte("{\n  \"naïve\": 1,\r\n  x}")
	for _, tc := range []struct {
		offset    int64
		line, col int
	}{
		{-5, 1, 1},
		{0, 1, 1},
		{1, 1, 2},
		{2, 2, 1},
		{int64(len("{\n  \"naïve\"")), 2, 10}, // ï is two bytes, one column
		{int64(len("{\n  \"naïve\": 1,\r\n  ")), 3, 3},
		{1000, 3, 5},
	} {
		if line, col := Position(body, tc.offset); line != tc.line || col != tc.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tc.offset, line, col, tc.line, tc.col)
		}
	}
	if _, _, ok := Trailing([]byte("{} \n\t"), 2); ok {
		t.Error("white space after the value counted as trailing data")
	}
	if line, col, ok := Trailing([]byte("{}\n ]"), 2); !ok || line != 2 || col != 2 {
		t.Errorf("Trailing = %d:%d %v, want 2:2", line, col, ok)
	}
}
