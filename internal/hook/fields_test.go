package hook

import (
	"errors"
	"strings"
	"testing"
)

// reader reads one value of values with String, Bool, Int or Quantity (as its string).
type reader func(values map[string]any) (any, bool, error)

func str(path ...string) reader {
	return func(v map[string]any) (any, bool, error) { return String(v, path...) }
}

func boolean(path ...string) reader {
	return func(v map[string]any) (any, bool, error) { return Bool(v, path...) }
}

func integer(path ...string) reader {
	return func(v map[string]any) (any, bool, error) { return Int(v, path...) }
}

func quantity(path ...string) reader {
	return func(v map[string]any) (any, bool, error) {
		q, found, err := Quantity(v, path...)
		return q.String(), found, err
	}
}

// TestFieldReaders covers String, Bool, Int and Quantity.
func TestFieldReaders(t *testing.T) {
	values := map[string]any{
		"version": "16", "count": int64(3), "ratio": 2.5, "whole": float64(7), "on": true, "null": nil,
		"size": "10Gi", "zero": "0", "negative": "-1Gi", "empty": "", "words": "ten gigabytes",
		"backup": map[string]any{"enabled": "yes"}, "list": []any{"a"},
	}
	tests := []struct {
		name    string
		read    reader
		want    any
		found   bool
		wantErr string
	}{
		{name: "string", read: str("version"), want: "16", found: true},
		{name: "string absent", read: str("image", "tag"), want: ""},
		{name: "string null", read: str("null"), want: ""},
		{name: "string under null", read: str("null", "x"), want: ""},
		{name: "string of a number", read: str("count"), want: "",
			wantErr: `spec.count: got the number 3, want a string (put it in quotes, such as "16")`},
		{name: "string under a list", read: str("list", "x"), want: "", wantErr: "spec.list: got a list, want a mapping"},
		{name: "string under a string", read: str("version", "major"), want: "",
			wantErr: `spec.version: got the string "16", want a mapping`},
		{name: "bool", read: boolean("on"), want: true, found: true},
		{name: "bool of a string", read: boolean("backup", "enabled"), want: false,
			wantErr: `spec.backup.enabled: got the string "yes", want true or false`},
		{name: "int", read: integer("count"), want: int64(3), found: true},
		{name: "int as float64", read: integer("whole"), want: int64(7), found: true},
		{name: "int of a fraction", read: integer("ratio"), want: int64(0), wantErr: "spec.ratio: got the number 2.5, want a whole number"},
		{name: "int of a mapping", read: integer("backup"), want: int64(0), wantErr: "spec.backup: got a mapping, want a whole number"},
		{name: "quantity", read: quantity("size"), want: "10Gi", found: true},
		{name: "quantity empty", read: quantity("empty"), want: "0"},
		{name: "quantity zero", read: quantity("zero"), want: "0", wantErr: `spec.zero: the string "0" is not positive; write a size such as "10Gi"`},
		{name: "quantity negative", read: quantity("negative"), want: "0", wantErr: `spec.negative: the string "-1Gi" is not positive`},
		{name: "quantity of words", read: quantity("words"), want: "0",
			wantErr: `spec.words: the string "ten gigabytes" is not a quantity (quantities must match the regular expression`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := tt.read(values)
			if got != tt.want || found != tt.found {
				t.Errorf("got %v, found %v; want %v, %v", got, found, tt.want, tt.found)
			}
			var fe *FieldError
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want a *FieldError beginning %q", err, tt.wantErr)
			}
		})
	}
}
