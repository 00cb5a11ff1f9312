import '@mantine/core/styles/Switch.css';
import '@mantine/core/styles/Checkbox.css';
import { Checkbox, Switch } from '@mantine/core';
import type { ComponentType } from 'react';
import type { WidgetProps } from './types';

interface BooleanControlProps {
  id: string;
  label: string;
  description?: string | undefined;
  checked: boolean;
  onChange: (event: { currentTarget: { checked: boolean } }) => void;
  onBlur: () => void;
  error?: string | undefined;
  disabled: boolean;
}

/** A boolean drawn by one Mantine control. */
function booleanWidget(Control: ComponentType<BooleanControlProps>) {
  return function BooleanWidget({
    id,
    label,
    description,
    value,
    onChange,
    onBlur,
    error,
    disabled,
  }: WidgetProps) {
    return (
      <Control
        id={id}
        label={label}
        description={description}
        checked={value === true}
        onChange={(event) => onChange(event.currentTarget.checked)}
        onBlur={onBlur}
        error={error}
        disabled={disabled}
      />
    );
  };
}

/** Boolean on/off (a setting). */
export const SwitchWidget = booleanWidget(Switch);

/** A boolean that is a choice about one action rather than a setting (stop the started desktops). */
export const CheckboxWidget = booleanWidget(Checkbox);
