package schemacheck

import "github.com/santhosh-tekuri/jsonschema/v6"

// everyObject reports whether s asserts nothing but "type": "object"
// (identifiers and annotations aside), so that every JSON object is valid
// against it. Most tool and workflow input schemas are exactly that, and
// telling so costs a few comparisons where validating a document costs a
// decode and the validator's allocations.
//
// Every keyword field of jsonschema.Schema is named below;
// TestEveryObjectWeighsEveryField fails for a field added by a new
// release of the validator until it is named here too, so a keyword this
// function does not know can never be skipped.
func everyObject(s *jsonschema.Schema) bool {
	var object jsonschema.Types
	object.Add("object")
	if s.Types == nil || *s.Types != object {
		return false
	}
	// Type agnostic keywords.
	if s.Bool != nil || s.Ref != nil || s.RecursiveRef != nil || s.DynamicRef != nil ||
		s.Enum != nil || s.Const != nil || s.Not != nil ||
		len(s.AllOf) != 0 || len(s.AnyOf) != 0 || len(s.OneOf) != 0 ||
		s.If != nil || s.Then != nil || s.Else != nil || s.Format != nil {
		return false
	}
	// Object keywords.
	if s.MaxProperties != nil || s.MinProperties != nil || len(s.Required) != 0 ||
		s.PropertyNames != nil || len(s.Properties) != 0 || len(s.PatternProperties) != 0 ||
		s.AdditionalProperties != nil || len(s.Dependencies) != 0 ||
		len(s.DependentRequired) != 0 || len(s.DependentSchemas) != 0 ||
		s.UnevaluatedProperties != nil {
		return false
	}
	// Array, string and number keywords: they do not apply to an object,
	// but a schema holding them is left to the validator all the same.
	if s.MinItems != nil || s.MaxItems != nil || s.UniqueItems || s.Contains != nil ||
		s.MinContains != nil || s.MaxContains != nil || s.Items != nil ||
		s.AdditionalItems != nil || len(s.PrefixItems) != 0 || s.Items2020 != nil ||
		s.UnevaluatedItems != nil {
		return false
	}
	if s.MinLength != nil || s.MaxLength != nil || s.Pattern != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil {
		return false
	}
	if s.Maximum != nil || s.Minimum != nil || s.ExclusiveMaximum != nil ||
		s.ExclusiveMinimum != nil || s.MultipleOf != nil {
		return false
	}
	// Vocabularies of the host's own.
	return len(s.Extensions) == 0
}
