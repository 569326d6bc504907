package whatif

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Sentinels wrapped by every error of Decode and Run; match them with
// errors.Is.
var (
	// ErrInvalid: the scenario is malformed or breaks a rule of the format.
	ErrInvalid = errors.New("whatif: invalid scenario")
	// ErrNotImplemented: the scenario asks a mode this version cannot answer.
	ErrNotImplemented = errors.New("not implemented yet")
)

// The modes of a scenario.
const (
	ModePlace   = "place"
	ModePreempt = "preempt"
	ModeDefrag  = "defrag"
)

// DefaultMaxMoves is maxMoves when a scenario omits it.
const DefaultMaxMoves = 8

// Scenario is a decoded scenario file. Pointer fields tell an omitted value
// from a zero one; Decode fills MaxMoves' default.
type Scenario struct {
	Version  *int     `json:"version"`
	Levels   []string `json:"levels"`
	Hosts    []Host   `json:"hosts"`
	Failed   []string `json:"failed"`
	Draining []string `json:"draining"`
	Jobs     []Job    `json:"jobs"`
	Request  *Request `json:"request"`
	Mode     string   `json:"mode"`
	MaxMoves *int     `json:"maxMoves"`
}

// Host is one host of a scenario.
type Host struct {
	Name  string   `json:"name"`
	Path  []string `json:"path"`
	GPUs  *int     `json:"gpus"`
	Model string   `json:"model"`
	// CPUMilli and MemoryMiB: nil means no limit (topology.Unlimited).
	CPUMilli  *int64 `json:"cpuMilli"`
	MemoryMiB *int64 `json:"memoryMiB"`
}

// Job is a running job of a scenario.
type Job struct {
	Name        string `json:"name"`
	Priority    int32  `json:"priority"`
	Preemptible bool   `json:"preemptible"`
	// Movable: nil means true.
	Movable       *bool  `json:"movable"`
	RequiredLevel string `json:"requiredLevel"`
	Pods          []Pod  `json:"pods"`
}

// Pod is a running pod: its host, the host's GPU indices it uses, and its
// resources.
type Pod struct {
	Host      string `json:"host"`
	GPUs      []int  `json:"gpus"`
	Milli     int32  `json:"milli"`
	CPUMilli  int32  `json:"cpuMilli"`
	MemoryMiB int32  `json:"memoryMiB"`
}

// Request is the gang a scenario asks about: one pod set.
type Request struct {
	Name           string   `json:"name"`
	Pods           int32    `json:"pods"`
	GPUs           int32    `json:"gpus"`
	Milli          int32    `json:"milli"`
	CPUMilli       int32    `json:"cpuMilli"`
	MemoryMiB      int32    `json:"memoryMiB"`
	Models         []string `json:"models"`
	RequiredLevel  string   `json:"requiredLevel"`
	PreferredLevel string   `json:"preferredLevel"`
	SliceSize      int32    `json:"sliceSize"`
	SliceLevel     string   `json:"sliceLevel"`
	Exclusive      bool     `json:"exclusive"`
	Priority       int32    `json:"priority"`
	Preemptible    bool     `json:"preemptible"`
}

// Decode reads one scenario: exact keys (encoding/json alone would match keys
// case-insensitively and let a repeated key win silently), no unknown or
// duplicate keys, values of the right types, nothing after the object. It
// checks only the syntax and the version; Run checks the rules.
func Decode(r io.Reader) (*Scenario, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: reading: %w", ErrInvalid, err)
	}
	if err := checkKeys(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var sc Scenario
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, jsonError(data, err))
	}
	if sc.Version != nil && *sc.Version != 1 {
		return nil, fmt.Errorf("%w: version %d, this program reads version 1", ErrInvalid, *sc.Version)
	}
	if sc.MaxMoves == nil {
		n := DefaultMaxMoves
		sc.MaxMoves = &n
	}
	return &sc, nil
}

// jsonError renders a decoding error with its line and column.
func jsonError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("%v (%s)", err, position(data, syn.Offset))
	case errors.As(err, &typ):
		return fmt.Sprintf("%s: cannot use %s as %s (%s)", typ.Field, typ.Value, typ.Type, position(data, typ.Offset))
	case errors.Is(err, io.EOF):
		return "empty input, want a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of input"
	}
	return err.Error()
}

// position is "line L, column C" of byte offset off (1-based).
func position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// checkKeys walks data token by token against Scenario's json tags: every key
// must be one of them, spelled exactly, at most once per object, and the
// scenario must be the only value. Values of the wrong type are skipped here;
// the decoder reports them.
func checkKeys(data []byte) error {
	w := keyWalker{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	w.dec.UseNumber()
	tok, err := w.dec.Token()
	if err != nil {
		return errors.New(jsonError(data, err))
	}
	if tok != json.Delim('{') {
		return fmt.Errorf("the scenario must be a JSON object (%s)", position(data, 0))
	}
	if err := w.object(reflect.TypeFor[Scenario](), ""); err != nil {
		return errors.New(jsonError(data, err))
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the scenario object (%s)", position(data, w.dec.InputOffset()))
	}
	return nil
}

type keyWalker struct {
	dec  *json.Decoder
	data []byte
}

// value checks the value that starts with tok against type t.
func (w *keyWalker) value(t reflect.Type, tok json.Token, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch tok {
	case json.Delim('{'):
		if t.Kind() != reflect.Struct {
			return w.skipRest()
		}
		return w.object(t, path)
	case json.Delim('['):
		if t.Kind() != reflect.Slice {
			return w.skipRest()
		}
		for i := 0; w.dec.More(); i++ {
			tok, err := w.dec.Token()
			if err != nil {
				return err
			}
			if err := w.value(t.Elem(), tok, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err := w.dec.Token() // ']'
		return err
	}
	return nil // a scalar
}

// object checks the members of an object whose '{' was read.
func (w *keyWalker) object(t reflect.Type, path string) error {
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string) // the decoder guarantees a string key here
		at := position(w.data, w.dec.InputOffset())
		f, ok := fieldByTag(t, key)
		switch {
		case !ok:
			return fmt.Errorf("unknown field %q%s%s (%s)", key, in(path), hint(t, key), at)
		case seen[key]:
			return fmt.Errorf("duplicate field %q%s (%s)", key, in(path), at)
		}
		seen[key] = true
		if tok, err = w.dec.Token(); err != nil {
			return err
		}
		where := key
		if path != "" {
			where = path + "." + key
		}
		if err := w.value(f.Type, tok, where); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // '}'
	return err
}

// skipRest consumes the rest of an object or array whose opening delimiter
// was read.
func (w *keyWalker) skipRest() error {
	for depth := 1; depth > 0; {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

func in(path string) string {
	if path == "" {
		return ""
	}
	return " in " + path
}

// hint suggests the exact spelling of a key that differs only in case.
func hint(t reflect.Type, key string) string {
	for i := range t.NumField() {
		if tag := jsonName(t.Field(i)); strings.EqualFold(tag, key) {
			return fmt.Sprintf(" (did you mean %q?)", tag)
		}
	}
	return ""
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); jsonName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}
