{#- Fails on every row whose column is null or not greater than 0 (a count of units that is there must count some). -#}
{% test positive(model, column_name) %}
select {{ column_name }} as value
from {{ model }}
where {{ column_name }} is null or {{ column_name }} <= 0
{% endtest %}
