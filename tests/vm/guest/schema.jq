# JSON Schema validation in jq (the guest has no python): the subset of
# draft 2020-12 that report/gdrcheck-report.schema.json uses. A schema
# keyword outside that subset is itself reported as an error, so a schema
# change cannot make this checker pass vacuously. A jq module:
#
#   jq -r -L /opt/vm --slurpfile s SCHEMA.json 'include "schema"; schema_errors($s[0])' DOC.json
#
# prints one line per violation ("PATH: message"), nothing when DOC is valid.
# Checked against python3-jsonschema on the scenario goldens and on broken
# copies of them: the same violations.

def supported: [
	"$schema", "$id", "$defs", "$ref", "title", "description",
	"type", "const", "enum", "pattern", "minLength", "minimum",
	"required", "properties", "additionalProperties",
	"items", "minItems", "maxItems", "uniqueItems", "oneOf", "allOf", "if",
	"then", "else"
];

def resolve($root):
	if type == "object" and has("$ref") then
		(.["$ref"] | if startswith("#/$defs/") then ltrimstr("#/$defs/") else error("unsupported $ref \(.)") end) as $n
		| $root["$defs"][$n] | resolve($root)
	else . end;

def jtype:
	if type == "number" then (if . == floor then "integer" else "number" end)
	else type end;

def type_ok($t):
	jtype as $j
	| any(($t | if type == "array" then .[] else . end); . == $j or (. == "number" and $j == "integer"));

def errs($s0; $root; $p):
	($s0 | resolve($root)) as $s
	| . as $x
	| (($s | keys) - supported | .[] | "\($p): schema keyword \"\(.)\" not supported by schema.jq"),
	  (if $s | has("type") then
		(if type_ok($s.type) then empty else "\($p): is \($x | jtype), schema wants \($s.type | tojson)" end)
	   else empty end),
	  (if $s | has("const") then
		(if $x == $s.const then empty else "\($p): \($x | tojson) is not \($s.const | tojson)" end)
	   else empty end),
	  (if $s | has("enum") then
		(if any($s.enum[]; . == $x) then empty else "\($p): \($x | tojson) not one of \($s.enum | tojson)" end)
	   else empty end),
	  (if ($s | has("pattern")) and ($x | type) == "string" then
		(if $x | test($s.pattern) then empty else "\($p): \($x | tojson) does not match \($s.pattern)" end)
	   else empty end),
	  (if ($s | has("minLength")) and ($x | type) == "string" then
		(if ($x | length) >= $s.minLength then empty else "\($p): shorter than \($s.minLength)" end)
	   else empty end),
	  (if ($s | has("minimum")) and ($x | type) == "number" then
		(if $x >= $s.minimum then empty else "\($p): \($x) < \($s.minimum)" end)
	   else empty end),
	  (if ($x | type) == "object" then
		(($s.required // [])[] | select(. as $k | $x | has($k) | not) | "\($p): missing required key \"\(.)\""),
		($x | keys_unsorted[]) as $k
		| if ($s.properties // {}) | has($k) then
			($x[$k] | errs($s.properties[$k]; $root; "\($p).\($k)"))
		  elif $s.additionalProperties == false then
			"\($p): unexpected key \"\($k)\""
		  elif ($s.additionalProperties | type) == "object" then
			($x[$k] | errs($s.additionalProperties; $root; "\($p).\($k)"))
		  else empty end
	   else empty end),
	  (if ($x | type) == "array" then
		(if ($s | has("minItems")) and ($x | length) < $s.minItems then "\($p): fewer than \($s.minItems) items" else empty end),
		(if ($s | has("maxItems")) and ($x | length) > $s.maxItems then "\($p): more than \($s.maxItems) items" else empty end),
		(if $s.uniqueItems == true and ($x | length) != ($x | unique | length) then "\($p): items not unique" else empty end),
		(if $s | has("items") then
			(range(0; $x | length) as $i | $x[$i] | errs($s.items; $root; "\($p)[\($i)]"))
		 else empty end)
	   else empty end),
	  (if $s | has("oneOf") then
		([$s.oneOf[] as $o | [$x | errs($o; $root; $p)] | length == 0] | map(select(.)) | length) as $n
		| if $n == 1 then empty else "\($p): matches \($n) of the oneOf alternatives, not exactly 1" end
	   else empty end),
	  (if $s | has("allOf") then ($s.allOf[] as $a | $x | errs($a; $root; $p)) else empty end),
	  (if $s | has("if") then
		(if ([$x | errs($s.if; $root; $p)] | length) == 0 then
			(if $s | has("then") then $x | errs($s.then; $root; $p) else empty end)
		 else
			(if $s | has("else") then $x | errs($s.else; $root; $p) else empty end)
		 end)
	   else empty end);

def schema_errors($root): errs($root; $root; "$");
