{#- Fails on every combination of the given columns that occurs more than once. Nulls count as a value (a
    gender-only row has race null), so (x, null) twice is a duplicate, as the grain of the marts requires.
    Written for this project because dbt packages (dbt_utils) cannot be installed here. -#}
{% test unique_grain(model, columns) %}
select
    {{ columns | join(', ') }},
    count(*) as occurrences
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endtest %}
